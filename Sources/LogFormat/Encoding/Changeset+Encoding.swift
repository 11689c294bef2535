// The changeset payload, in this order:
//   version u8 (1) · transactionID varuint · commitTimeMicroseconds zigzag varint · author string ·
//   nextKey varuint · foreign store count varuint, then 16-byte UUIDs · operation count varuint, then operations.
// The foreign stores come before the operations so that every store index can be checked as it is read.
// Version 2 (written only when the changeset advances a named counter) adds, after the operations: sequence
// reservation count varuint, then for each its name string and its last value varuint.

extension Changeset {
    /// Encodes the changeset in the compact binary payload format (`Docs/FileFormat-Payloads.md`).
    ///
    /// - Throws: ``LogFormatError/Code/limitExceeded`` when a string, byte array, list or index is over its limit
    ///   in `LogLimits` or the payload would exceed `LogLimits.maxTransactionByteCount`;
    ///   ``LogFormatError/Code/invalidArgument`` when an ``ObjectReference/storeIndex`` names no foreign store.
    public func encoded() throws(LogFormatError) -> [UInt8] {
        try PayloadEnvelope.encode(
            "changeset", maxByteCount: LogLimits.maxTransactionByteCount,
            version: sequenceReservations.isEmpty ? 1 : Self.sequencesVersion
        ) { (writer) throws(LogFormatError) in
            writer.writeVarUInt(transactionID)
            writer.writeVarInt(commitTimeMicroseconds)
            try writer.writeString(author, field: "the changeset's author")
            writer.writeVarUInt(nextKey)
            try LogUUID.encodeList(foreignStores, to: &writer, field: "the changeset's foreign stores")
            try writer.writeCount(operations.count, field: "the changeset's operations")
            for operation in operations {
                try operation.encode(to: &writer, foreignStoreCount: foreignStores.count)
            }
            if !sequenceReservations.isEmpty {
                try SequenceReservation.encodeList(sequenceReservations, to: &writer)
            }
        }
    }

    /// The payload version that adds ``sequenceReservations``.
    static let sequencesVersion: UInt8 = 2

    /// Decodes a changeset encoded by ``encoded()``.
    ///
    /// - Throws: ``LogFormatError/Code/malformedPayload`` with the byte offset of the problem when the bytes are
    ///   truncated, corrupt, over a limit, or followed by extra bytes; ``LogFormatError/Code/unsupportedVersion``
    ///   when the payload was written by a newer format version.
    public init(decoding bytes: [UInt8]) throws(LogFormatError) {
        self = try ByteReader.withReader(over: bytes) { (reader) throws(LogFormatError) -> Changeset in
            try Changeset(envelopeFrom: &reader)
        }
    }

    /// Decodes a changeset from a transaction's payload, reading a fragmented one fragment by fragment.
    init(decoding payload: SpannedPayload) throws(LogFormatError) {
        switch payload {
        case .whole(let bytes):
            try self.init(decoding: bytes)
        case .fragmented(let fragments):
            self = try fragments.withReader { (reader) throws(LogFormatError) -> Changeset in
                try Changeset(envelopeFrom: &reader)
            }
        }
    }

    /// Reads a whole payload: the version byte, then the fields of that version.
    private init(envelopeFrom reader: inout ByteReader) throws(LogFormatError) {
        self = try PayloadEnvelope.decode(
            "changeset", from: &reader, maxByteCount: LogLimits.maxTransactionByteCount,
            newestVersion: Self.sequencesVersion
        ) { (reader, version) throws(LogFormatError) -> Changeset in
            try Changeset(fieldsFrom: &reader, version: version)
        }
    }

    /// Reads the fields that follow the version byte.
    private init(fieldsFrom reader: inout ByteReader, version: UInt8) throws(LogFormatError) {
        let transactionID = try reader.readVarUInt("the transaction ID")
        let commitTime = try reader.readVarInt("the commit time")
        let author = try reader.readString("the author")
        let nextKey = try reader.readVarUInt("the next key")
        let foreignStores = try LogUUID.decodeList(from: &reader, "the number of foreign stores")
        let operationCount = try reader.readCount(
            "the number of operations", minimumElementByteCount: ChangeOperation.minimumEncodedByteCount)
        var operations: [ChangeOperation] = []
        operations.reserveCapacity(operationCount)
        for _ in 0..<operationCount {
            operations.append(try ChangeOperation(from: &reader, foreignStoreCount: foreignStores.count))
        }
        let reservations = version >= Self.sequencesVersion ? try SequenceReservation.decodeList(from: &reader) : []
        self.init(
            transactionID: transactionID, commitTimeMicroseconds: commitTime, author: author, nextKey: nextKey,
            foreignStores: foreignStores, operations: operations, sequenceReservations: reservations)
    }
}
