// CheckpointDirectory (format 1.3), after the version byte (1):
//   entity count varuint, then per entity: entityIndex varuint · chunk count varuint, then per chunk:
//   byteOffset varuint · objectCount varuint · minKey varuint · maxKey varuint
//   Version 2 (format 1.4, written only when the checkpoint stores indexes) adds, after the entities:
//   index count varuint, then per index: kind byte (0 unique, 1 attribute) · entityIndex varuint ·
//   ownerEntityIndex varuint · ordinal varuint · arity varuint · chunk count varuint, then per chunk:
//   byteOffset varuint · entryCount varuint · first entry's values · last entry's values (attribute values)
// One frame's payload, so at most `LogLimits.maxFrameRawByteCount` bytes. Every number is checked as it is read
// (`Docs/FileFormat-Payloads.md` §5.7.4): the frames it points at are checked by the scanner and at load.

extension CheckpointDirectory {
    /// The fewest bytes one chunk entry takes (four one-byte varints); bounds a count before allocation.
    static let minimumChunkEntryByteCount = 4
    /// The payload version that adds ``indexes`` (format 1.4).
    static let indexesVersion: UInt8 = 2

    /// Encodes the payload in the compact binary payload format (`Docs/FileFormat-Payloads.md` §5.7.4).
    ///
    /// - Throws: ``LogFormatError/Code/invalidArgument`` for a directory no reader would accept (entities out of
    ///   order, an entity without chunks, offsets that do not increase, an object count outside
    ///   1 ... ``LogLimits/maxEntityChunkObjectCount``, `minKey > maxKey`); ``LogFormatError/Code/limitExceeded``
    ///   when it does not fit one frame.
    package func encoded() throws(LogFormatError) -> [UInt8] {
        if let problem = Self.problem(in: self) {
            throw LogFormatError(.invalidArgument, "a checkpoint directory \(problem)")
        }
        return try PayloadEnvelope.encode(
            "checkpoint directory", maxByteCount: LogLimits.maxFrameRawByteCount,
            version: indexes.isEmpty ? 1 : Self.indexesVersion
        ) { (writer) throws(LogFormatError) in
            try writer.writeCount(entities.count, limit: LogLimits.maxEntityCount, field: "the directory's entities")
            for entity in entities {
                writer.writeVarUInt(UInt64(entity.entityIndex))
                try writer.writeCount(entity.chunks.count, field: "the chunks of entity #\(entity.entityIndex)")
                for chunk in entity.chunks {
                    writer.writeVarUInt(chunk.byteOffset)
                    writer.writeVarUInt(UInt64(chunk.objectCount))
                    writer.writeVarUInt(chunk.minKey)
                    writer.writeVarUInt(chunk.maxKey)
                }
            }
            if !indexes.isEmpty { try encodeIndexes(to: &writer) }
        }
    }

    /// Decodes a payload encoded by ``encoded()``, checking every number as it is read.
    ///
    /// - Throws: ``LogFormatError/Code/malformedPayload`` with the byte offset of the problem;
    ///   ``LogFormatError/Code/unsupportedVersion`` for a payload written by a newer format version.
    package init(decoding bytes: [UInt8]) throws(LogFormatError) {
        self = try ByteReader.withReader(over: bytes) { (reader) throws(LogFormatError) -> CheckpointDirectory in
            try PayloadEnvelope.decode(
                "checkpoint directory", from: &reader, maxByteCount: LogLimits.maxFrameRawByteCount,
                newestVersion: Self.indexesVersion
            ) { (reader, version) throws(LogFormatError) -> CheckpointDirectory in
                try Self.decodeBody(&reader, version: version)
            }
        }
    }

    private static func decodeBody(_ reader: inout ByteReader, version: UInt8) throws(LogFormatError)
        -> CheckpointDirectory
    {
        // An entity entry is at least its index, a count and one chunk entry.
        let entityCount = try reader.readCount(
            "the number of entities", limit: LogLimits.maxEntityCount,
            minimumElementByteCount: 2 + Self.minimumChunkEntryByteCount)
        var entities: [EntityChunks] = []
        entities.reserveCapacity(entityCount)
        var previousOffset: UInt64?
        for _ in 0..<entityCount {
            let start = reader.offset
            let entityIndex = try reader.readIndex("an entity index", below: LogLimits.maxEntityCount)
            if let last = entities.last, entityIndex <= last.entityIndex {
                throw reader.malformed(
                    "entity #\(entityIndex) follows entity #\(last.entityIndex); entities must increase", at: start)
            }
            let chunkStart = reader.offset
            let chunkCount = try reader.readCount(
                "the number of chunks", minimumElementByteCount: Self.minimumChunkEntryByteCount)
            guard chunkCount > 0 else {
                throw reader.malformed("entity #\(entityIndex) lists no chunks", at: chunkStart)
            }
            var chunks: [EntityChunkEntry] = []
            chunks.reserveCapacity(chunkCount)
            for _ in 0..<chunkCount {
                let chunk = try Self.readChunkEntry(&reader, after: previousOffset, entityIndex: entityIndex)
                previousOffset = chunk.byteOffset
                chunks.append(chunk)
            }
            entities.append(EntityChunks(entityIndex: entityIndex, chunks: chunks))
        }
        let indexes = version >= indexesVersion ? try decodeIndexes(&reader, after: previousOffset) : []
        return CheckpointDirectory(entities: entities, indexes: indexes)
    }

    /// Reads one chunk entry and checks its numbers: an offset in the frame area, 8-aligned, after the previous
    /// entry's; an object count in 1 ... 4,096; `minKey ≤ maxKey`.
    private static func readChunkEntry(_ reader: inout ByteReader, after previousOffset: UInt64?, entityIndex: UInt32)
        throws(LogFormatError) -> EntityChunkEntry
    {
        let start = reader.offset
        let byteOffset = try reader.readVarUInt("a chunk's byte offset")
        guard isFrameOffset(byteOffset, after: nil) else {
            throw reader.malformed(
                "a chunk of entity #\(entityIndex) is at byte offset \(byteOffset), where no frame can start", at: start
            )
        }
        if let previousOffset, byteOffset <= previousOffset {
            throw reader.malformed(
                "a chunk of entity #\(entityIndex) is at byte offset \(byteOffset), not after \(previousOffset)",
                at: start)
        }
        let countStart = reader.offset
        let objectCount = try reader.readVarUInt("a chunk's object count")
        guard objectCount >= 1, objectCount <= UInt64(LogLimits.maxEntityChunkObjectCount) else {
            throw reader.malformed(
                "the chunk of entity #\(entityIndex) at byte offset \(byteOffset) holds \(objectCount) objects, "
                    + "not 1 to \(LogLimits.maxEntityChunkObjectCount)", at: countStart)
        }
        let keyStart = reader.offset
        let minKey = try reader.readVarUInt("a chunk's smallest key")
        let maxKey = try reader.readVarUInt("a chunk's largest key")
        guard minKey <= maxKey else {
            throw reader.malformed(
                "the chunk of entity #\(entityIndex) at byte offset \(byteOffset) has keys \(minKey) to \(maxKey)",
                at: keyStart)
        }
        return EntityChunkEntry(
            byteOffset: byteOffset, objectCount: UInt32(objectCount), minKey: minKey, maxKey: maxKey)
    }

    /// Why a reader would refuse `directory`, or `nil`: the decoder's checks, applied before writing.
    static func problem(in directory: CheckpointDirectory) -> String? {
        var previousEntity: UInt32?
        var previousOffset: UInt64?
        for entity in directory.entities {
            if Int(entity.entityIndex) >= LogLimits.maxEntityCount { return "names entity #\(entity.entityIndex)" }
            if let previousEntity, entity.entityIndex <= previousEntity { return "lists entities out of order" }
            if entity.chunks.isEmpty { return "lists no chunks for entity #\(entity.entityIndex)" }
            for chunk in entity.chunks {
                if !isFrameOffset(chunk.byteOffset, after: previousOffset) {
                    return "lists a chunk at byte offset \(chunk.byteOffset)"
                }
                if chunk.objectCount < 1 || Int(chunk.objectCount) > LogLimits.maxEntityChunkObjectCount {
                    return "lists a chunk of \(chunk.objectCount) objects"
                }
                if chunk.minKey > chunk.maxKey { return "lists a chunk with keys \(chunk.minKey) to \(chunk.maxKey)" }
                previousOffset = chunk.byteOffset
            }
            previousEntity = entity.entityIndex
        }
        return indexProblem(in: directory.indexes, after: previousOffset)
    }

    /// Whether a listed chunk may be at `offset`: in the frame area, 8-aligned, after `previousOffset` when given.
    static func isFrameOffset(_ offset: UInt64, after previousOffset: UInt64?) -> Bool {
        offset >= LogFileHeader.framesByteOffset && offset % UInt64(FrameHeader.alignment) == 0
            && previousOffset.map { offset > $0 } ?? true
    }
}
