// The changeset payload, in this order:
//   version u8 (1) · transactionID varuint · commitTimeMicroseconds zigzag varint · author string ·
//   nextKey varuint · foreign store count varuint, then 16-byte UUIDs · operation count varuint, then operations.
// Version 2 (a save across stores) adds, after the foreign stores: the cross-store transaction's UUID, then a
// participant count varuint and, per participant, its 16-byte store UUID and its transaction ID varuint.
// The foreign stores come before the operations so that every store index can be checked as it is read.
// Version 3 (written only when the changeset advances a named counter) is version 1 followed, after the operations,
// by a sequence reservation count varuint, then for each its name string and its last value varuint. No changeset
// is both a part of a save across stores and a counter's advance, so no version holds both.

extension Changeset {
    /// Encodes the changeset in the compact binary payload format (`Docs/FileFormat-Payloads.md`).
    ///
    /// - Throws: ``LogFormatError/Code/limitExceeded`` when a string, byte array, list or index is over its limit
    ///   in `LogLimits` or the payload would exceed `LogLimits.maxTransactionByteCount`;
    ///   ``LogFormatError/Code/invalidArgument`` when an ``ObjectReference/storeIndex`` names no foreign store.
    public func encoded() throws(LogFormatError) -> [UInt8] {
        // A save of one store that advances no counter stays version 1, byte for byte, so that older readers read it.
        // Room for the whole payload up front: a bulk save's tens of megabytes are not copied at every doubling.
        return try PayloadEnvelope.encode(
            "changeset", maxByteCount: LogLimits.maxTransactionByteCount,
            reservedByteCount: min(estimatedEncodedByteCount, LogLimits.maxTransactionByteCount),
            version: try payloadVersion()
        ) { (writer) throws(LogFormatError) in
            writer.writeVarUInt(transactionID)
            writer.writeVarInt(commitTimeMicroseconds)
            try writer.writeString(author, field: "the changeset's author")
            writer.writeVarUInt(nextKey)
            try LogUUID.encodeList(foreignStores, to: &writer, field: "the changeset's foreign stores")
            if let crossStore { try crossStore.encode(to: &writer) }
            try writer.writeCount(operations.count, field: "the changeset's operations")
            for operation in operations {
                try operation.encode(to: &writer, foreignStoreCount: foreignStores.count)
            }
            if !sequenceReservations.isEmpty {
                try SequenceReservation.encodeList(sequenceReservations, to: &writer)
            }
        }
    }

    /// At least the byte count of ``encoded()`` (each varint counted at its longest), read from the lengths of the
    /// strings and lists without encoding them: the room the encoder reserves.
    var estimatedEncodedByteCount: Int {
        let reference = 20  // store index, entity index and key
        var count = 64 + author.utf8.count + 16 * foreignStores.count
        count += 32 * (crossStore?.participants.count ?? 0)
        for reservation in sequenceReservations { count += 20 + reservation.name.utf8.count }
        func estimate(_ changes: [PropertyChange]) -> Int {
            var count = 10
            for change in changes {
                count += 10
                switch change.value {
                case .attribute(let value): count += value.estimatedEncodedByteCount
                case .toOne: count += 1 + reference
                case .toMany(let targets): count += 11 + reference * targets.count
                }
            }
            return count
        }
        for operation in operations {
            count += 1 + reference
            switch operation {
            case .insert(_, let changes), .update(_, let changes): count += estimate(changes)
            case .relate(_, _, let added, let removed): count += 25 + reference * (added.count + removed.count)
            case .delete: continue
            }
        }
        return count
    }

    /// Decodes a changeset encoded by ``encoded()`` (through `Changeset.visit` with a collector: the one
    /// decoder of the payload).
    ///
    /// - Throws: ``LogFormatError/Code/malformedPayload`` with the byte offset of the problem when the bytes are
    ///   truncated, corrupt, over a limit, or followed by extra bytes; ``LogFormatError/Code/unsupportedVersion``
    ///   when the payload was written by a newer format version.
    public init(decoding bytes: [UInt8]) throws(LogFormatError) {
        var collector = ChangesetCollector()
        try Self.visit(bytes, &collector)
        self = collector.changeset
    }

    /// The payload version of a changeset of one store that advances no counter.
    static let singleStoreVersion: UInt8 = 1
    /// The payload version of a changeset that is one part of a save across stores.
    static let crossStoreVersion: UInt8 = 2
    /// The payload version of a changeset that advances named counters (``sequenceReservations``).
    static let sequencesVersion: UInt8 = 3

    /// The smallest version that can hold this changeset. A part of a save across stores never advances a counter
    /// (a counter's value is a transaction of its own store), so no version holds both.
    private func payloadVersion() throws(LogFormatError) -> UInt8 {
        switch (crossStore, sequenceReservations.isEmpty) {
        case (nil, true): return Self.singleStoreVersion
        case (.some, true): return Self.crossStoreVersion
        case (nil, false): return Self.sequencesVersion
        case (.some, false):
            throw LogFormatError(
                .invalidArgument,
                "transaction \(transactionID): a part of a save across stores cannot also advance named counters")
        }
    }
}
