// The three checkpoint payloads. Each starts with the format version byte (1):
//   CheckpointBegin: lastTransactionID varuint · lastCommitTimeMicroseconds zigzag varint · nextKey varuint ·
//                    objectCount varuint · (version 2, written only when the store has named counters)
//                    sequence reservation count varuint, then for each its name string and last value varuint
//   CheckpointChunk: foreign store count varuint, then 16-byte UUIDs · record count varuint, then records
//                    (object reference, then a property change list, as in a changeset's insert)
//   CheckpointEnd:   objectCount varuint · stateDigest (varuint length, then bytes)
// Begin and end are the payload of a single frame, so each is at most `LogLimits.maxFrameRawByteCount` bytes. A
// chunk may be larger than one frame (format 1.2): a writer splits it over checkpoint-chunk-first/-middle/-last
// frames, so a checkpoint can hold every object a transaction can; it is bounded like a transaction.

extension CheckpointBegin {
    /// The payload version that adds ``sequenceReservations`` (a checkpoint's own numbering, not a changeset's).
    static let sequencesVersion: UInt8 = 2

    /// Encodes the payload in the compact binary payload format (`Docs/FileFormat-Payloads.md`).
    package func encoded() throws(LogFormatError) -> [UInt8] {
        try PayloadEnvelope.encode(
            "checkpoint begin", maxByteCount: LogLimits.maxFrameRawByteCount,
            version: sequenceReservations.isEmpty ? 1 : Self.sequencesVersion
        ) { (writer) throws(LogFormatError) in
            writer.writeVarUInt(lastTransactionID)
            writer.writeVarInt(lastCommitTimeMicroseconds)
            writer.writeVarUInt(nextKey)
            writer.writeVarUInt(objectCount)
            if !sequenceReservations.isEmpty {
                try SequenceReservation.encodeList(sequenceReservations, to: &writer)
            }
        }
    }

    /// Decodes a payload encoded by ``encoded()``.
    ///
    /// - Throws: ``LogFormatError/Code/malformedPayload`` with the byte offset of the problem;
    ///   ``LogFormatError/Code/unsupportedVersion`` for a payload written by a newer format version.
    package init(decoding bytes: [UInt8]) throws(LogFormatError) {
        self = try ByteReader.withReader(over: bytes) { (reader) throws(LogFormatError) -> CheckpointBegin in
            try PayloadEnvelope.decode(
                "checkpoint begin", from: &reader, maxByteCount: LogLimits.maxFrameRawByteCount,
                newestVersion: Self.sequencesVersion
            ) { (reader, version) throws(LogFormatError) -> CheckpointBegin in
                var begin = CheckpointBegin(
                    lastTransactionID: try reader.readVarUInt("the last transaction ID"),
                    lastCommitTimeMicroseconds: try reader.readVarInt("the last commit time"),
                    nextKey: try reader.readVarUInt("the next key"),
                    objectCount: try reader.readVarUInt("the object count"))
                if version >= Self.sequencesVersion {
                    begin.sequenceReservations = try SequenceReservation.decodeList(from: &reader)
                }
                return begin
            }
        }
    }
}

extension CheckpointChunk {
    /// Encodes the payload in the compact binary payload format (`Docs/FileFormat-Payloads.md`).
    ///
    /// - Throws: ``LogFormatError/Code/limitExceeded`` when a value or list is over its limit or the payload would
    ///   exceed ``LogLimits/maxTransactionByteCount`` (split the records into more chunks);
    ///   ``LogFormatError/Code/invalidArgument`` when an ``ObjectReference/storeIndex`` names no foreign store.
    package func encoded() throws(LogFormatError) -> [UInt8] {
        try PayloadEnvelope.encode(
            "checkpoint chunk", maxByteCount: LogLimits.maxTransactionByteCount, reservedByteCount: 4096
        ) { (writer) throws(LogFormatError) in
            try LogUUID.encodeList(foreignStores, to: &writer, field: "the chunk's foreign stores")
            try writer.writeCount(records.count, field: "the chunk's records")
            for record in records {
                try record.object.encode(to: &writer, foreignStoreCount: foreignStores.count)
                try PropertyChange.encodeList(record.properties, to: &writer, foreignStoreCount: foreignStores.count)
            }
        }
    }

    /// Decodes a payload encoded by ``encoded()``.
    ///
    /// - Throws: ``LogFormatError/Code/malformedPayload`` with the byte offset of the problem;
    ///   ``LogFormatError/Code/unsupportedVersion`` for a payload written by a newer format version.
    package init(decoding bytes: [UInt8]) throws(LogFormatError) {
        self = try PayloadEnvelope.decode(
            "checkpoint chunk", from: bytes, maxByteCount: LogLimits.maxTransactionByteCount
        ) { (reader) throws(LogFormatError) -> CheckpointChunk in
            try CheckpointChunk(fieldsFrom: &reader)
        }
    }

    /// Decodes a chunk as a scan found it, reading one that spans fragments fragment by fragment.
    init(decoding payload: SpannedPayload) throws(LogFormatError) {
        switch payload {
        case .whole(let bytes):
            try self.init(decoding: bytes)
        case .compressed(let stored):
            try self.init(decoding: try stored.decompressed())
        case .fragmented(let fragments):
            self = try fragments.withReader { (reader) throws(LogFormatError) -> CheckpointChunk in
                try PayloadEnvelope.decode(
                    "checkpoint chunk", from: &reader, maxByteCount: LogLimits.maxTransactionByteCount
                ) { (reader) throws(LogFormatError) -> CheckpointChunk in
                    try CheckpointChunk(fieldsFrom: &reader)
                }
            }
        }
    }

    /// Reads the fields that follow the version byte.
    private init(fieldsFrom reader: inout ByteReader) throws(LogFormatError) {
        // One decoding of the fields (`CheckpointChunk+Visiting.swift`), here collecting the records.
        var collector = CheckpointChunkCollector()
        try Self.visitFields(from: &reader, &collector)
        self = collector.chunk
    }
}

extension CheckpointEnd {
    /// Encodes the payload in the compact binary payload format (`Docs/FileFormat-Payloads.md`).
    ///
    /// - Throws: ``LogFormatError/Code/limitExceeded`` when the digest is longer than
    ///   ``LogLimits/maxBinaryByteCount``.
    package func encoded() throws(LogFormatError) -> [UInt8] {
        try PayloadEnvelope.encode("checkpoint end", maxByteCount: LogLimits.maxFrameRawByteCount) {
            (writer) throws(LogFormatError) in
            writer.writeVarUInt(objectCount)
            try writer.writeByteArray(stateDigest, field: "the state digest")
        }
    }

    /// Decodes a payload encoded by ``encoded()``.
    ///
    /// - Throws: ``LogFormatError/Code/malformedPayload`` with the byte offset of the problem;
    ///   ``LogFormatError/Code/unsupportedVersion`` for a payload written by a newer format version.
    package init(decoding bytes: [UInt8]) throws(LogFormatError) {
        self = try PayloadEnvelope.decode(
            "checkpoint end", from: bytes, maxByteCount: LogLimits.maxFrameRawByteCount
        ) { (reader) throws(LogFormatError) -> CheckpointEnd in
            CheckpointEnd(
                objectCount: try reader.readVarUInt("the object count"),
                stateDigest: try reader.readByteArray("the state digest"))
        }
    }
}
