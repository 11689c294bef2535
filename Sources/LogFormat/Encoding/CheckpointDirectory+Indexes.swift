// The index list of a checkpoint directory (payload version 2, format 1.4); see CheckpointDirectory+Encoding.swift
// for the layout and `Docs/FileFormat-Checkpoints.md` §7 for the rules.

extension CheckpointDirectory {
    /// The fewest bytes one index chunk entry of arity 1 takes (offset, count, two one-byte values).
    static let minimumIndexChunkEntryByteCount = 4
    /// The fewest bytes one index takes before its chunks (kind, four varints, chunk count) plus one chunk.
    static let minimumIndexByteCount = 6 + minimumIndexChunkEntryByteCount

    /// Writes the index list (the caller checked the directory with ``problem(in:)``).
    func encodeIndexes(to writer: inout ByteWriter) throws(LogFormatError) {
        try writer.writeCount(indexes.count, field: "the directory's indexes")
        for index in indexes {
            writer.writeUInt8(index.kind.rawValue)
            writer.writeVarUInt(UInt64(index.entityIndex))
            writer.writeVarUInt(UInt64(index.ownerEntityIndex))
            writer.writeVarUInt(UInt64(index.ordinal))
            writer.writeVarUInt(UInt64(index.arity))
            try writer.writeCount(index.chunks.count, field: "the chunks of an index of entity #\(index.entityIndex)")
            for chunk in index.chunks {
                writer.writeVarUInt(chunk.byteOffset)
                writer.writeVarUInt(UInt64(chunk.entryCount))
                for value in chunk.firstValues { try value.encode(to: &writer) }
                for value in chunk.lastValues { try value.encode(to: &writer) }
            }
        }
    }

    /// Reads the index list, checking every number: kinds, entity and property indices below their limits, an
    /// arity of 1 ... ``LogLimits/maxIndexArity`` (1 for an attribute index), indexes in increasing (entity, kind,
    /// owner, ordinal) order, chunk offsets in the frame area, 8-aligned and increasing after `previousOffset` (the
    /// last entity chunk's), entry counts of 1 ... ``LogLimits/maxIndexChunkEntryCount``.
    static func decodeIndexes(_ reader: inout ByteReader, after previousOffset: UInt64?) throws(LogFormatError)
        -> [IndexChunks]
    {
        let count = try reader.readCount("the number of indexes", minimumElementByteCount: minimumIndexByteCount)
        var indexes: [IndexChunks] = []
        indexes.reserveCapacity(count)
        var previousOffset = previousOffset
        for _ in 0..<count {
            let start = reader.offset
            let rawKind = try reader.readUInt8("an index's kind")
            guard let kind = CheckpointIndexKind(rawValue: rawKind) else {
                throw reader.malformed("an index of kind \(rawKind), not 0 (unique) or 1 (attribute)", at: start)
            }
            let entityIndex = try reader.readIndex("an index's entity", below: LogLimits.maxEntityCount)
            let ownerEntityIndex = try reader.readIndex("an index's owner entity", below: LogLimits.maxEntityCount)
            let ordinal = try reader.readIndex("an index's ordinal", below: LogLimits.maxPropertyCount)
            let arityStart = reader.offset
            let arity = try reader.readVarUInt("an index's arity")
            guard arity >= 1, arity <= UInt64(LogLimits.maxIndexArity),
                kind == .unique || (arity == 1 && ownerEntityIndex == entityIndex)
            else {
                throw reader.malformed(
                    "a \(kind) index of entity #\(entityIndex) (owner #\(ownerEntityIndex)) has arity \(arity)",
                    at: arityStart)
            }
            let index = IndexChunks(
                kind: kind, entityIndex: entityIndex, ownerEntityIndex: ownerEntityIndex, ordinal: ordinal,
                arity: UInt32(arity), chunks: [])
            if let last = indexes.last, !Self.precedes(last, index) {
                throw reader.malformed(
                    "the index (entity #\(entityIndex), kind \(rawKind), owner #\(ownerEntityIndex), ordinal "
                        + "\(ordinal)) does not follow the one before it in order", at: start)
            }
            let chunkStart = reader.offset
            let chunkCount = try reader.readCount(
                "the number of index chunks", minimumElementByteCount: 2 + 2 * Int(arity))
            guard chunkCount > 0 else {
                throw reader.malformed("an index of entity #\(entityIndex) lists no chunks", at: chunkStart)
            }
            var chunks: [IndexChunkEntry] = []
            chunks.reserveCapacity(chunkCount)
            for _ in 0..<chunkCount {
                let chunk = try readIndexChunkEntry(&reader, arity: Int(arity), after: previousOffset)
                previousOffset = chunk.byteOffset
                chunks.append(chunk)
            }
            var complete = index
            complete.chunks = chunks
            indexes.append(complete)
        }
        return indexes
    }

    private static func readIndexChunkEntry(_ reader: inout ByteReader, arity: Int, after previousOffset: UInt64?)
        throws(LogFormatError) -> IndexChunkEntry
    {
        let start = reader.offset
        let byteOffset = try reader.readVarUInt("an index chunk's byte offset")
        guard isFrameOffset(byteOffset, after: previousOffset) else {
            throw reader.malformed(
                "an index chunk is at byte offset \(byteOffset), where no frame can start or not after the chunk "
                    + "before it", at: start)
        }
        let countStart = reader.offset
        let entryCount = try reader.readVarUInt("an index chunk's entry count")
        guard entryCount >= 1, entryCount <= UInt64(LogLimits.maxIndexChunkEntryCount) else {
            throw reader.malformed(
                "the index chunk at byte offset \(byteOffset) holds \(entryCount) entries, not 1 to "
                    + "\(LogLimits.maxIndexChunkEntryCount)", at: countStart)
        }
        var first: [AttributeValue] = []
        var last: [AttributeValue] = []
        first.reserveCapacity(arity)
        last.reserveCapacity(arity)
        for _ in 0..<arity { first.append(try AttributeValue(from: &reader)) }
        for _ in 0..<arity { last.append(try AttributeValue(from: &reader)) }
        return IndexChunkEntry(
            byteOffset: byteOffset, entryCount: UInt32(entryCount), firstValues: first, lastValues: last)
    }

    /// The order of indexes in a directory: by entity, kind, owner, ordinal (each index at most once).
    package static func precedes(_ a: IndexChunks, _ b: IndexChunks) -> Bool {
        (a.entityIndex, a.kind.rawValue, a.ownerEntityIndex, a.ordinal)
            < (b.entityIndex, b.kind.rawValue, b.ownerEntityIndex, b.ordinal)
    }

    /// Why a reader would refuse the index list after the entity chunks ending at `lastEntityOffset`, or `nil`.
    static func indexProblem(in indexes: [IndexChunks], after lastEntityOffset: UInt64?) -> String? {
        var previousOffset = lastEntityOffset
        var previous: IndexChunks?
        for index in indexes {
            if Int(index.entityIndex) >= LogLimits.maxEntityCount
                || Int(index.ownerEntityIndex) >= LogLimits.maxEntityCount
                || Int(index.ordinal) >= LogLimits.maxPropertyCount
            {
                return "names an index of entity #\(index.entityIndex) out of range"
            }
            if index.arity < 1 || Int(index.arity) > LogLimits.maxIndexArity
                || (index.kind == .attribute && (index.arity != 1 || index.ownerEntityIndex != index.entityIndex))
            {
                return "lists an index of arity \(index.arity)"
            }
            if let previous, !precedes(previous, index) { return "lists indexes out of order" }
            if index.chunks.isEmpty { return "lists an index without chunks" }
            for chunk in index.chunks {
                if !isFrameOffset(chunk.byteOffset, after: previousOffset) {
                    return "lists an index chunk at byte offset \(chunk.byteOffset)"
                }
                if chunk.entryCount < 1 || Int(chunk.entryCount) > LogLimits.maxIndexChunkEntryCount {
                    return "lists an index chunk of \(chunk.entryCount) entries"
                }
                if chunk.firstValues.count != Int(index.arity) || chunk.lastValues.count != Int(index.arity) {
                    return "lists an index chunk whose bounds do not have \(index.arity) values"
                }
                previousOffset = chunk.byteOffset
            }
            previous = index
        }
        return nil
    }
}
