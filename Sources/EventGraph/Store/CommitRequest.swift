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
    /// The committed row (or `nil` when deleted) of every object the changeset touched.
    var rows: [ObjectIdentity: Row?]
    /// The permanent identity of each inserted object whose identity changed: an upsert merged it into the existing
    /// object with its unique values. Every other inserted object keeps its identity as its permanent one.
    var permanentIdentities: [ObjectIdentity: ObjectIdentity]
    /// For a commit through a coordinator of several stores: the transaction of each store it touched, by store
    /// index (``transactionID`` is then only the latest of any store).
    var storeTransactionIDs: [UInt32: UInt64] = [:]
}
