import LogFormat

/// What a context asks its ``ObjectStore`` to commit: the operations of one changeset, without its transaction ID.
///
/// Objects are named by references and identities in the object store's numbering of stores
/// (``ObjectStore/storeUUIDs``), so one request can carry objects of several stores.
struct CommitRequest: Sendable {
    var author: String
    var operations: [ChangeOperation]
    /// The row each updated or deleted object was read from (optimistic conflict detection).
    var readRows: [ObjectIdentity: Row]
    var mergePolicy: MergePolicy
    /// Inserted objects that take over an existing object with the same unique values instead of failing:
    /// identity → index into the entity's ``EntityDescription/uniqueConstraints``.
    var upserts: [ObjectIdentity: Int] = [:]
    /// The stores that references with a store index above 0 point into, as in a changeset
    /// (``Changeset/foreignStores``); only a request a coordinator of several stores hands one ``Store`` has any.
    var foreignStores: [LogUUID] = []
    /// Named counters the changeset advances (see `Stores/Store+SequenceGenerator.swift`).
    var sequenceReservations: [SequenceReservation] = []
}

/// What a commit did.
struct CommitResult: Sendable {
    /// The transaction that holds the commit.
    var transactionID: UInt64
    /// The committed row (or `nil` when deleted) of every object the changeset touched, each object once, in the
    /// order the commit first touched them (for a store: the order of the request's operations, then the objects
    /// whose inverses it repaired). An array, not a dictionary: a bulk save hashed every identity twice to build
    /// and read one (``CommittedRowMatcher`` reads it in order).
    var rows: [(identity: ObjectIdentity, row: Row?)]
    /// The permanent identity of each inserted object whose identity changed: an upsert merged it into the existing
    /// object with its unique values. Every other inserted object keeps its identity as its permanent one.
    var permanentIdentities: [ObjectIdentity: ObjectIdentity]
    /// For a commit through a coordinator of several stores: the transaction of each store it touched, by store
    /// index (``transactionID`` is then only the latest of any store).
    var storeTransactionIDs: [UInt32: UInt64] = [:]
}

/// Finds the committed rows of a save's objects in a ``CommitResult/rows``, asked in about the order the rows are
/// in: each question is answered by the next row when it is the object's (a save's inserted objects, the usual
/// bulk), else by a table of the rows' positions, made on the first question out of order.
struct CommittedRowMatcher {
    private let rows: [(identity: ObjectIdentity, row: Row?)]
    private var next = 0
    private var positions: [ObjectIdentity: Int]?

    init(_ rows: [(identity: ObjectIdentity, row: Row?)]) {
        self.rows = rows
    }

    /// The committed row of an object: `nil` when the commit deleted it or did not touch it.
    mutating func row(of identity: ObjectIdentity) -> Row? {
        if next < rows.count, rows[next].identity == identity {
            next += 1
            return rows[next - 1].row
        }
        if positions == nil {
            var table: [ObjectIdentity: Int] = [:]
            table.reserveCapacity(rows.count)
            for (position, entry) in rows.enumerated() { table[entry.identity] = position }
            positions = table
        }
        guard let position = positions?[identity] else { return nil }
        next = position + 1
        return rows[position].row
    }

    /// Whether a question out of order made the table of positions (for tests).
    var hasTable: Bool { positions != nil }
}
