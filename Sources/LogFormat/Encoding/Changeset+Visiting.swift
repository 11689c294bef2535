// Decoding a changeset without building its operations: each operation and each property value is handed to a
// visitor as it is read, a string or a binary value as the payload's own bytes (a string checked to be UTF-8 once),
// so that a replay that writes the values into columns builds no `PropertyValue`, no `String` and no array of
// changes per value. `Changeset(decoding:)` is this decoding with a visitor that collects the operations, so the two
// cannot disagree (the model is `CheckpointChunk.visit`).

/// The fields of a changeset that come before its operations.
package struct ChangesetHeader: Sendable {
    package var transactionID: UInt64
    package var commitTimeMicroseconds: Int64
    package var author: String
    package var nextKey: UInt64
    package var foreignStores: [LogUUID]
    package var crossStore: CrossStoreTransaction?

    package init(
        transactionID: UInt64, commitTimeMicroseconds: Int64, author: String, nextKey: UInt64,
        foreignStores: [LogUUID], crossStore: CrossStoreTransaction?
    ) {
        self.transactionID = transactionID
        self.commitTimeMicroseconds = commitTimeMicroseconds
        self.author = author
        self.nextKey = nextKey
        self.foreignStores = foreignStores
        self.crossStore = crossStore
    }
}

/// The kinds of operations whose property values a ``ChangesetVisitor`` receives one at a time.
package enum ChangesetOperationKind: Sendable {
    /// A new object; its values follow.
    case insert
    /// Changed properties of an existing object; its values follow.
    case update
    /// The object no longer exists; no values follow.
    case delete
}

/// What receives a changeset's contents as they are decoded, in payload order: the header and the number of
/// operations, then each operation — an insert, update or delete as ``visitOperation(_:_:)``, its property values,
/// and ``endOperation()``; a relate as one ``visitRelate(_:propertyIndex:added:removed:)`` — then the sequence
/// reservations. The calls do not throw: a visitor that cannot use something notes it and reports it once the
/// decoding is done (a payload that does not decode is reported first).
package protocol ChangesetVisitor {
    mutating func visitHeader(_ header: ChangesetHeader, operationCount: Int)
    mutating func visitOperation(_ kind: ChangesetOperationKind, _ object: ObjectReference)
    mutating func visitProperty(_ propertyIndex: UInt32, _ value: BorrowedPropertyValue)
    mutating func endOperation()
    mutating func visitRelate(
        _ object: ObjectReference, propertyIndex: UInt32, added: [ObjectReference], removed: [ObjectReference])
    mutating func visitSequenceReservations(_ reservations: [SequenceReservation])
}

extension Changeset {
    /// Decodes a changeset payload into `visitor`, with the checks of ``init(decoding:)-([UInt8])``; returns the
    /// header.
    ///
    /// - Throws: ``LogFormatError/Code/malformedPayload`` with the byte offset of the problem;
    ///   ``LogFormatError/Code/unsupportedVersion`` for a payload written by a newer format version.
    @discardableResult
    package static func visit(_ bytes: [UInt8], _ visitor: inout some ChangesetVisitor) throws(LogFormatError)
        -> ChangesetHeader
    {
        try ByteReader.withReader(over: bytes) { (reader) throws(LogFormatError) -> ChangesetHeader in
            try visitPayload(from: &reader, &visitor)
        }
    }

    /// Decodes a transaction's payload into `visitor`, reading a fragmented one fragment by fragment.
    static func visit(_ payload: SpannedPayload, _ visitor: inout some ChangesetVisitor) throws(LogFormatError)
        -> ChangesetHeader
    {
        switch payload {
        case .whole(let bytes):
            return try visit(bytes, &visitor)
        case .fragmented(let fragments):
            return try fragments.withReader { (reader) throws(LogFormatError) -> ChangesetHeader in
                try visitPayload(from: &reader, &visitor)
            }
        case .compressed(let stored):
            return try visit(try stored.decompressed(), &visitor)
        }
    }

    /// Reads a whole changeset payload into `visitor`: the envelope, then the fields of its version.
    static func visitPayload(from reader: inout ByteReader, _ visitor: inout some ChangesetVisitor)
        throws(LogFormatError) -> ChangesetHeader
    {
        try PayloadEnvelope.decode(
            "changeset", from: &reader, maxByteCount: LogLimits.maxTransactionByteCount,
            newestVersion: Self.sequencesVersion
        ) { (reader, version) throws(LogFormatError) -> ChangesetHeader in
            try visitFields(from: &reader, version: version, &visitor)
        }
    }

    /// Reads the fields that follow the version byte into `visitor`.
    static func visitFields(from reader: inout ByteReader, version: UInt8, _ visitor: inout some ChangesetVisitor)
        throws(LogFormatError) -> ChangesetHeader
    {
        let transactionID = try reader.readVarUInt("the transaction ID")
        let commitTime = try reader.readVarInt("the commit time")
        let author = try reader.readString("the author")
        let nextKey = try reader.readVarUInt("the next key")
        let foreignStores = try LogUUID.decodeList(from: &reader, "the number of foreign stores")
        let crossStore = version == Self.crossStoreVersion ? try CrossStoreTransaction(from: &reader) : nil
        let operationCount = try reader.readCount(
            "the number of operations", minimumElementByteCount: ChangeOperation.minimumEncodedByteCount)
        let header = ChangesetHeader(
            transactionID: transactionID, commitTimeMicroseconds: commitTime, author: author, nextKey: nextKey,
            foreignStores: foreignStores, crossStore: crossStore)
        visitor.visitHeader(header, operationCount: operationCount)
        for _ in 0..<operationCount {
            try ChangeOperation.visit(from: &reader, foreignStoreCount: foreignStores.count, &visitor)
        }
        let reservations = version == Self.sequencesVersion ? try SequenceReservation.decodeList(from: &reader) : []
        visitor.visitSequenceReservations(reservations)
        return header
    }
}

extension ChangeOperation {
    /// Reads a tag byte and the operation it introduces into `visitor` (the checks of
    /// ``init(from:foreignStoreCount:)``).
    static func visit(from reader: inout ByteReader, foreignStoreCount: Int, _ visitor: inout some ChangesetVisitor)
        throws(LogFormatError)
    {
        let tagOffset = reader.offset
        let tag = try reader.readUInt8("an operation's tag")
        guard let known = EncodingTag(rawValue: tag) else {
            throw reader.malformed("unknown operation tag 0x\(String(tag, radix: 16))", at: tagOffset)
        }
        let object = try ObjectReference(from: &reader, foreignStoreCount: foreignStoreCount)
        switch known {
        case .insert, .update:
            visitor.visitOperation(known == .insert ? .insert : .update, object)
            let count = try reader.readCount(
                "the number of property values", limit: LogLimits.maxPropertyCount,
                minimumElementByteCount: PropertyChange.minimumEncodedByteCount)
            for _ in 0..<count {
                let propertyIndex = try reader.readIndex("a property index", below: LogLimits.maxPropertyCount)
                try PropertyValue.visit(from: &reader, foreignStoreCount: foreignStoreCount) { value in
                    visitor.visitProperty(propertyIndex, value)
                }
            }
            visitor.endOperation()
        case .relate:
            let propertyIndex = try reader.readIndex(
                "a relate operation's property index", below: LogLimits.maxPropertyCount)
            let added = try ObjectReference.decodeList(
                from: &reader, foreignStoreCount: foreignStoreCount, "the number of added targets")
            let removed = try ObjectReference.decodeList(
                from: &reader, foreignStoreCount: foreignStoreCount, "the number of removed targets")
            visitor.visitRelate(object, propertyIndex: propertyIndex, added: added, removed: removed)
        case .delete:
            visitor.visitOperation(.delete, object)
            visitor.endOperation()
        }
    }
}

extension TransactionRecord {
    /// The payload when it is held in memory in one array (not read fragment by fragment from the file): a visitor
    /// of ``visitChangeset(_:)`` may keep it and refer to the bytes it lends by their offset in it, without copying
    /// them (the bytes lent are this array's, not a copy's).
    package var wholePayload: [UInt8]? {
        if case .whole(let bytes) = body { return bytes }
        return nil
    }

    /// The record with its payload decompressed, when the scan that found it left that to its decoding (see
    /// ``LogReader/scan(fromTransactionID:defersEntityChunkBodies:defersTransactionDecompression:_:)``): then a
    /// ``wholePayload``.
    ///
    /// - Throws: ``LogFormatError/Code/damaged`` when its LZ4 block does not decompress (which a scan that
    ///   verifies reports as damage or a torn tail at the frame instead).
    package func decompressed() throws(LogFormatError) -> TransactionRecord {
        guard case .compressed = body else { return self }
        return TransactionRecord(
            transactionID: transactionID, body: try body.decompressed(), blobs: blobs, byteOffset: byteOffset)
    }

    /// The record with a fragmented payload of at most `maxByteCount` bytes read into one array
    /// (``FragmentedPayload/assembled(maxByteCount:)``: each fragment decompressed straight into it), so that it is a
    /// ``wholePayload``; any other record as it is.
    ///
    /// - Throws: ``LogFormatError/Code/damaged`` (or ``LogFormatError/Code/io``) when a fragment fails when read
    ///   again, as decoding it fragment by fragment would.
    package func assembled(maxByteCount: Int) throws(LogFormatError) -> TransactionRecord {
        guard case .fragmented(let fragments) = body, let whole = try fragments.assembled(maxByteCount: maxByteCount)
        else { return self }
        return TransactionRecord(
            transactionID: transactionID, body: .whole(whole), blobs: blobs, byteOffset: byteOffset)
    }
}

/// The visitor behind ``Changeset/init(decoding:)-([UInt8])``: collects the operations into a ``Changeset``.
package struct ChangesetCollector: ChangesetVisitor {
    private var header = ChangesetHeader(
        transactionID: 0, commitTimeMicroseconds: 0, author: "", nextKey: 0, foreignStores: [], crossStore: nil)
    private var operations: [ChangeOperation] = []
    private var current: (kind: ChangesetOperationKind, object: ObjectReference, changes: [PropertyChange])?
    private var reservations: [SequenceReservation] = []

    package init() {}

    package mutating func visitHeader(_ header: ChangesetHeader, operationCount: Int) {
        self.header = header
        operations.reserveCapacity(operationCount)
    }
    package mutating func visitOperation(_ kind: ChangesetOperationKind, _ object: ObjectReference) {
        current = (kind, object, [])
    }
    package mutating func visitProperty(_ propertyIndex: UInt32, _ value: BorrowedPropertyValue) {
        current?.changes.append(PropertyChange(propertyIndex: propertyIndex, value: value.materialized))
    }
    package mutating func endOperation() {
        guard let current else { return }
        switch current.kind {
        case .insert: operations.append(.insert(current.object, current.changes))
        case .update: operations.append(.update(current.object, current.changes))
        case .delete: operations.append(.delete(current.object))
        }
        self.current = nil
    }
    package mutating func visitRelate(
        _ object: ObjectReference, propertyIndex: UInt32, added: [ObjectReference], removed: [ObjectReference]
    ) {
        operations.append(.relate(object, propertyIndex: propertyIndex, added: added, removed: removed))
    }
    package mutating func visitSequenceReservations(_ reservations: [SequenceReservation]) {
        self.reservations = reservations
    }

    /// The changeset the calls described.
    package var changeset: Changeset {
        Changeset(
            transactionID: header.transactionID, commitTimeMicroseconds: header.commitTimeMicroseconds,
            author: header.author, nextKey: header.nextKey, foreignStores: header.foreignStores,
            operations: operations, sequenceReservations: reservations, crossStore: header.crossStore)
    }
}
