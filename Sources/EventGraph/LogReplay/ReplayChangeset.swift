package import LogFormat

/// A transaction's changeset as replay reads it: decoded by LogFormat's ``ChangesetVisitor`` into flat arrays — the
/// operations, their values by column kind (a string's or a binary's bytes in one byte buffer, a fixed-width value as
/// its bit pattern, relationship targets in one reference array), and each relate's targets — with no
/// ``PropertyValue``, `String` or array of changes per value. The decoding thread does that conversion; the in-place
/// applier writes each value into its column by kind from here (`StoreState.replay`); ``changeset`` builds the
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

    /// One property value of an insert or an update, by the column storage it goes to (its ``tag``):
    /// - a byte value (``ValueTag/isBytes``): its bytes are ``ReplayChangeset/bytes``[`start..<start + count`];
    /// - a fixed-width value (``ValueTag/isFixedWidth``): ``word``, its bit pattern, is kept in `start`;
    /// - ``ValueTag/toOne``: its target is ``ReplayChangeset/targets``[`start`]; ``ValueTag/toMany``: its targets are
    ///   ``ReplayChangeset/targets``[`start..<start + count`];
    /// - ``ValueTag/uuid`` and ``ValueTag/blob``: ``ReplayChangeset/others``[`start`];
    /// - ``ValueTag/null`` and ``ValueTag/toOneNil``: the tag alone.
    struct Value: Sendable {
        var propertyIndex: UInt32
        var tag: ValueTag
        /// For a byte value: whether every byte is ASCII (found while the decoder had them in cache, so that the
        /// column's arena does not read them again to find out).
        var isASCII = false
        var start: Int
        var count: Int

        /// A fixed-width value's bit pattern.
        var word: UInt64 { UInt64(UInt(bitPattern: start)) }
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
    /// The UUIDs and blob references.
    private(set) var others: [AttributeValue] = []
    /// The targets of to-one and to-many values, one list after the other.
    private(set) var targets: [ObjectReference] = []
    private(set) var relates: [(added: [ObjectReference], removed: [ObjectReference])] = []
    private(set) var sequenceReservations: [SequenceReservation] = []
    private var valuesStart = 0

    init() {}

    /// Decodes a transaction record's changeset (the checks of ``TransactionRecord/changeset()``).
    ///
    /// - Parameter assemblingUpTo: the longest fragmented payload read into one array first (tests pass less, to
    ///   decode one fragment by fragment).
    package init(
        _ transaction: TransactionRecord, assemblingUpTo maxAssembledByteCount: Int = largestAssembledByteCount
    ) throws(LogFormatError) {
        // A body the scan left compressed is decompressed here, once, into the payload the values stay in; so are
        // the fragments of a large transaction, straight into one array (up to ``largestAssembledByteCount``): its
        // values stay in it too, instead of being copied out of each fragment as it is read (BENCHMARKS.md, h96).
        let transaction = try transaction.decompressed().assembled(maxByteCount: maxAssembledByteCount)
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
            // A fragmented payload too large to assemble lends each value from the fragment being read: the values
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
            bytes.reserveCapacity(min(transaction.payloadByteCount, Self.largestAssembledByteCount))
        }
        try transaction.visitChangeset(&self)
        payloadAddresses = 0..<0
    }

    /// The longest fragmented payload read into one array before it is decoded (the array is allocated at the
    /// fragments' recorded lengths, the file's word, before they are decompressed: bounded as the copies' buffer of
    /// a longer one is reserved).
    static let largestAssembledByteCount = 64 << 20

    /// The byte buffer of a changeset already applied, kept for the next fragmented one (at most one, of at most
    /// ``largestSpareByteCount`` bytes: memory a process keeps after replaying large transactions).
    private static let spareBuffer = LockedValue<[UInt8]>([])
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
        case .toMany(let list):
            // Copied from the decoder's buffer straight into the targets (no array per list).
            values.append(Value(propertyIndex: propertyIndex, tag: .toMany, start: targets.count, count: list.count))
            targets.append(contentsOf: list)
        case .bytes(let kind, let borrowed, let knownASCII):
            // A string's UTF-8 check found out already; a binary value's bytes are scanned here.
            let isASCII = knownASCII ?? ByteArena.isASCII(borrowed)
            if let start = borrowed.baseAddress, payloadAddresses.contains(UInt(bitPattern: start)),
                UInt(bitPattern: start) + UInt(borrowed.count) <= payloadAddresses.upperBound
            {
                // Lent from the payload `bytes` shares: referred to where it is.
                let offset = Int(UInt(bitPattern: start) - payloadAddresses.lowerBound)
                values.append(
                    Value(
                        propertyIndex: propertyIndex, tag: ValueTag(kind), isASCII: isASCII, start: offset,
                        count: borrowed.count))
                return
            }
            values.append(
                Value(
                    propertyIndex: propertyIndex, tag: ValueTag(kind), isASCII: isASCII, start: bytes.count,
                    count: borrowed.count))
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

    /// Appends a value decoded whole or held whole (from a ``Changeset``, a byte value's bytes are copied as
    /// decoding would): by the column storage it goes to (see ``Value``).
    private mutating func append(_ propertyIndex: UInt32, _ value: PropertyValue) {
        func append(_ tag: ValueTag, start: Int = 0, count: Int = 0) {
            values.append(Value(propertyIndex: propertyIndex, tag: tag, start: start, count: count))
        }
        switch value {
        case .attribute(let attribute):
            if let (tag, word) = attribute.fixedWidthEncoding {
                return append(tag, start: Int(bitPattern: UInt(word)))
            }
            let isBytes =
                attribute.withBytesEncoding { tag, borrowed -> Bool in
                    values.append(
                        Value(
                            propertyIndex: propertyIndex, tag: tag, isASCII: ByteArena.isASCII(borrowed),
                            start: bytes.count, count: borrowed.count))
                    bytes.append(contentsOf: borrowed)
                    return true
                } ?? false
            if isBytes { return }
            switch attribute {
            case .null: append(.null)
            case .uuid:
                append(.uuid, start: others.count)
                others.append(attribute)
            case .blob:
                append(.blob, start: others.count)
                others.append(attribute)
            default: preconditionFailure("\(attribute) has no column storage")
            }
        case .toOne(nil):
            append(.toOneNil)
        case .toOne(let target?):
            append(.toOne, start: targets.count)
            targets.append(target)
        case .toMany(let list):
            append(.toMany, start: targets.count, count: list.count)
            targets.append(contentsOf: list)
        }
    }

    // MARK: - Reading

    /// A value as a ``PropertyValue`` (copies a byte value's bytes and a to-many value's targets).
    func materialized(_ value: Value) -> PropertyValue {
        let tag = value.tag
        switch tag {
        case .string, .url, .decimal, .binary, .transformable:
            return bytes.withUnsafeBytes { all in
                .attribute(
                    AttributeValue(
                        bytes: tag, UnsafeRawBufferPointer(rebasing: all[value.start..<value.start + value.count])))
            }
        case .int16, .int32, .int64, .double, .float, .bool, .date:
            return .attribute(AttributeValue(fixedWidth: tag, value.word))
        case .null: return .attribute(.null)
        case .uuid, .blob: return .attribute(others[value.start])
        case .toOneNil: return .toOne(nil)
        case .toOne: return .toOne(targets[value.start])
        case .toMany: return .toMany(Array(targets[value.start..<value.start + value.count]))
        case .absent: preconditionFailure("a replayed value is never absent")
        }
    }

    /// Writes a value into the column of a live slot's property, by kind: a byte value from the payload's bytes
    /// (see ``Column/set(bytes:tag:at:isASCII:)``), a fixed-width value as its bit pattern, a relationship's targets
    /// from ``targets`` — what ``Column/set(_:at:)-(PropertyValue?,_)`` does with the value's ``materialized(_:)``
    /// form, without it (no enum, no array per to-many value, no retain or release per value).
    @inline(__always)
    func write(_ value: Value, into column: inout Column, at slot: Int) {
        let tag = value.tag
        switch tag {
        case .string, .url, .decimal, .binary, .transformable:
            bytes.withUnsafeBytes { all in
                column.set(
                    bytes: UnsafeRawBufferPointer(rebasing: all[value.start..<value.start + value.count]), tag: tag,
                    at: slot, isASCII: value.isASCII)
            }
        case .int16, .int32, .int64, .double, .float, .bool, .date: column.set(word: value.word, tag: tag, at: slot)
        case .null, .toOneNil: column.set(valueOfTagAlone: tag, at: slot)
        case .toOne: column.set(target: targets[value.start], at: slot)
        case .toMany:
            targets.withUnsafeBufferPointer { all in
                column.set(
                    manyTargets: UnsafeBufferPointer(rebasing: all[value.start..<value.start + value.count]), at: slot)
            }
        case .uuid, .blob: column.set(.attribute(others[value.start]), at: slot)
        case .absent: preconditionFailure("a replayed value is never absent")
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
        // UUIDs and blob references name no store; relationship targets do.
        for index in targets.indices { targets[index] = StoreState.localize(targets[index], map) }
        for index in relates.indices {
            relates[index].added = relates[index].added.map { StoreState.localize($0, map) }
            relates[index].removed = relates[index].removed.map { StoreState.localize($0, map) }
        }
    }
}
