package import LogFormat
import Synchronization

/// A transaction's changeset as replay reads it: decoded by LogFormat's ``ChangesetVisitor`` into flat arrays — the
/// operations, their values (a string's or a binary's bytes copied into one byte buffer, other values as they
/// decode), and each relate's targets — with no ``PropertyValue``, `String` or array of changes per value. The
/// in-place applier writes the values into the columns from here (`StoreState.replay`); ``changeset`` builds the
/// ``Changeset`` the same payload decodes to, for the readers that need one (the change feed, staging's fallback,
/// `egctl replay --changesets`).
package struct ReplayChangeset: ChangesetVisitor, Sendable {
    enum Kind: Sendable {
        case insert, update, relate, delete
    }

    struct Operation: Sendable {
        var kind: Kind
        var object: ObjectReference
        /// An insert's or update's values: a range of ``values``; a relate's: its index in ``relates`` (lower bound).
        var values: Range<Int>
        /// A relate's property.
        var propertyIndex: UInt32 = 0
    }

    /// One property value of an insert or an update.
    struct Value: Sendable {
        var propertyIndex: UInt32
        /// A byte value's kind (its bytes are `bytes[start..<start + count]`); `nil` for ``ReplayChangeset/others``
        /// `[start]`.
        var byteKind: ByteValueKind?
        var start: Int
        var count: Int
    }

    package private(set) var header = ChangesetHeader(
        transactionID: 0, commitTimeMicroseconds: 0, author: "", nextKey: 0, foreignStores: [], crossStore: nil)
    private(set) var operations: [Operation] = []
    private(set) var values: [Value] = []
    /// The bytes of the byte values: the transaction's payload itself when it was in memory in one array (each value
    /// refers to its bytes where they are in it), otherwise copies, one after the other.
    private(set) var bytes: [UInt8] = []
    /// Where the payload `bytes` shares lies in memory while it is decoded (as integers, never dereferenced: a value
    /// lent from inside it is referred to by its offset; anything else is copied).
    private var payloadAddresses: Range<UInt> = 0..<0
    /// Whether `bytes` is the transaction's payload (not a buffer of this changeset's own).
    private var payloadSharing = false
    /// The values that are not bytes (null, fixed-width values, UUIDs, blob references, relationships).
    private(set) var others: [PropertyValue] = []
    private(set) var relates: [(added: [ObjectReference], removed: [ObjectReference])] = []
    private(set) var sequenceReservations: [SequenceReservation] = []
    private var valuesStart = 0

    init() {}

    /// Decodes a transaction record's changeset (the checks of ``TransactionRecord/changeset()``).
    package init(_ transaction: TransactionRecord) throws(LogFormatError) {
        if let payload = transaction.wholePayload {
            // The byte values stay in the payload (shared, not copied): no second copy of every string before the
            // columns take theirs.
            bytes = payload
            payloadSharing = true
            payloadAddresses = payload.withUnsafeBytes { whole in
                guard let start = whole.baseAddress else { return 0..<0 }
                return UInt(bitPattern: start)..<UInt(bitPattern: start) + UInt(whole.count)
            }
        } else {
            // A fragmented payload (a large transaction) lends each value from the fragment being read: the values
            // are copied into one buffer, sized once for the payload (its bytes bound theirs) and taken from the
            // changeset replayed before this one when it is free, so that its pages are not allocated and
            // faulted in again for every transaction.
            bytes = Self.spareBuffer.withLock { spare in
                let taken = spare
                spare = []
                return taken
            }
            bytes.removeAll(keepingCapacity: true)
            // The fragments' lengths were read from verified frames; past 64 MiB the buffer grows as it fills.
            bytes.reserveCapacity(min(transaction.payloadByteCount, 64 << 20))
        }
        try transaction.visitChangeset(&self)
        payloadAddresses = 0..<0
    }

    /// The byte buffer of a changeset already applied, kept for the next fragmented one (at most one, of at most
    /// ``largestSpareByteCount`` bytes: memory a process keeps after replaying large transactions).
    private static let spareBuffer = Mutex<[UInt8]>([])
    private static let largestSpareByteCount = 16 << 20

    /// Offers this changeset's byte buffer to the next fragmented payload decoded (call once it has been applied).
    /// Only a buffer of its own is kept, not a shared payload; a copy of the changeset still held elsewhere keeps
    /// its bytes (the next user of the buffer then allocates its own: arrays are values).
    func recycleBuffer() {
        guard payloadSharing == false, bytes.capacity <= Self.largestSpareByteCount, bytes.capacity > 0 else { return }
        let buffer = bytes
        Self.spareBuffer.withLock { spare in if spare.capacity < buffer.capacity { spare = buffer } }
    }

    /// The flat form of a changeset built in memory (tests, and callers that hold a ``Changeset``): what decoding
    /// its encoding gives.
    init(_ changeset: Changeset) {
        header = ChangesetHeader(
            transactionID: changeset.transactionID, commitTimeMicroseconds: changeset.commitTimeMicroseconds,
            author: changeset.author, nextKey: changeset.nextKey, foreignStores: changeset.foreignStores,
            crossStore: changeset.crossStore)
        operations.reserveCapacity(changeset.operations.count)
        for operation in changeset.operations {
            switch operation {
            case .insert(let object, let changes), .update(let object, let changes):
                if case .insert = operation { visitOperation(.insert, object) } else { visitOperation(.update, object) }
                for change in changes { append(change.propertyIndex, change.value) }
                endOperation()
            case .relate(let object, let propertyIndex, let added, let removed):
                visitRelate(object, propertyIndex: propertyIndex, added: added, removed: removed)
            case .delete(let object):
                visitOperation(.delete, object)
                endOperation()
            }
        }
        sequenceReservations = changeset.sequenceReservations
    }

    package var transactionID: UInt64 { header.transactionID }

    // MARK: - ChangesetVisitor

    package mutating func visitHeader(_ header: ChangesetHeader, operationCount: Int) {
        self.header = header
        operations.reserveCapacity(operationCount)
    }

    package mutating func visitOperation(_ kind: ChangesetOperationKind, _ object: ObjectReference) {
        let kind: Kind =
            switch kind {
            case .insert: .insert
            case .update: .update
            case .delete: .delete
            }
        valuesStart = values.count
        operations.append(Operation(kind: kind, object: object, values: valuesStart..<valuesStart))
    }

    package mutating func visitProperty(_ propertyIndex: UInt32, _ value: BorrowedPropertyValue) {
        switch value {
        case .value(let value):
            append(propertyIndex, value)
        case .bytes(let kind, let borrowed):
            if let start = borrowed.baseAddress, payloadAddresses.contains(UInt(bitPattern: start)),
                UInt(bitPattern: start) + UInt(borrowed.count) <= payloadAddresses.upperBound
            {
                // Lent from the payload `bytes` shares: referred to where it is.
                let offset = Int(UInt(bitPattern: start) - payloadAddresses.lowerBound)
                values.append(Value(propertyIndex: propertyIndex, byteKind: kind, start: offset, count: borrowed.count))
                return
            }
            values.append(
                Value(propertyIndex: propertyIndex, byteKind: kind, start: bytes.count, count: borrowed.count))
            bytes.append(contentsOf: borrowed)
        }
    }

    package mutating func endOperation() {
        operations[operations.count - 1].values = valuesStart..<values.count
    }

    package mutating func visitRelate(
        _ object: ObjectReference, propertyIndex: UInt32, added: [ObjectReference], removed: [ObjectReference]
    ) {
        operations.append(
            Operation(
                kind: .relate, object: object, values: relates.count..<relates.count, propertyIndex: propertyIndex))
        relates.append((added, removed))
    }

    package mutating func visitSequenceReservations(_ reservations: [SequenceReservation]) {
        sequenceReservations = reservations
    }

    /// Appends a value held whole (from a ``Changeset``, a byte value's bytes are copied as decoding would).
    private mutating func append(_ propertyIndex: UInt32, _ value: PropertyValue) {
        if case .attribute(let attribute) = value,
            attribute.withBytesEncoding({ tag, borrowed -> Bool in
                values.append(
                    Value(
                        propertyIndex: propertyIndex, byteKind: ByteValueKind(tag), start: bytes.count,
                        count: borrowed.count))
                bytes.append(contentsOf: borrowed)
                return true
            }) ?? false
        {
            return
        }
        values.append(Value(propertyIndex: propertyIndex, byteKind: nil, start: others.count, count: 0))
        others.append(value)
    }

    // MARK: - Reading

    /// Calls `body` with a value: ``BorrowedPropertyValue/bytes(_:_:)`` lends bytes valid only during the call.
    @inline(__always)
    func withValue<R>(_ value: Value, _ body: (BorrowedPropertyValue) -> R) -> R {
        guard let kind = value.byteKind else { return body(.value(others[value.start])) }
        return bytes.withUnsafeBytes { all in
            body(.bytes(kind, UnsafeRawBufferPointer(rebasing: all[value.start..<value.start + value.count])))
        }
    }

    /// A value as a ``PropertyValue`` (copies a byte value's bytes).
    func materialized(_ value: Value) -> PropertyValue {
        withValue(value) { $0.materialized }
    }

    /// Writes a value into a live slot's property: a byte value from the payload's bytes (see
    /// ``ColumnChunk/set(bytes:tag:property:at:)``), any other as it decoded.
    @inline(__always)
    func write(_ value: Value, into chunk: inout ColumnChunk, property: Int, at position: Int) {
        guard let kind = value.byteKind else { return chunk.set(others[value.start], property: property, at: position) }
        bytes.withUnsafeBytes { all in
            chunk.set(
                bytes: UnsafeRawBufferPointer(rebasing: all[value.start..<value.start + value.count]),
                tag: ValueTag(kind), property: property, at: position)
        }
    }

    /// The property changes of an insert or update.
    func changes(of operation: Operation) -> [PropertyChange] {
        values[operation.values].map { PropertyChange(propertyIndex: $0.propertyIndex, value: materialized($0)) }
    }

    /// The ``Changeset`` the payload decodes to.
    package var changeset: Changeset {
        let operations = operations.map { operation -> ChangeOperation in
            switch operation.kind {
            case .insert: .insert(operation.object, changes(of: operation))
            case .update: .update(operation.object, changes(of: operation))
            case .relate:
                .relate(
                    operation.object, propertyIndex: operation.propertyIndex,
                    added: relates[operation.values.lowerBound].added,
                    removed: relates[operation.values.lowerBound].removed)
            case .delete: .delete(operation.object)
            }
        }
        return Changeset(
            transactionID: header.transactionID, commitTimeMicroseconds: header.commitTimeMicroseconds,
            author: header.author, nextKey: header.nextKey, foreignStores: header.foreignStores,
            operations: operations, sequenceReservations: sequenceReservations, crossStore: header.crossStore)
    }

    // MARK: - Foreign stores

    /// Re-expresses every reference in the state's table of foreign stores (`map[k - 1]` is the state's index of
    /// the payload's store `k`); the payload's own table is emptied (see `StoreState.localize(_:)`).
    mutating func localize(_ map: [UInt32]) {
        header.foreignStores = []
        for index in operations.indices {
            operations[index].object = StoreState.localize(operations[index].object, map)
        }
        for index in others.indices {
            others[index] = StoreState.localize(PropertyChange(propertyIndex: 0, value: others[index]), map).value
        }
        for index in relates.indices {
            relates[index].added = relates[index].added.map { StoreState.localize($0, map) }
            relates[index].removed = relates[index].removed.map { StoreState.localize($0, map) }
        }
    }
}
