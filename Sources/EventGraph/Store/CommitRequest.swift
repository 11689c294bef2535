import LogFormat

/// What a context asks the store to commit: the operations of one changeset, without its transaction ID.
struct CommitRequest: Sendable {
    var author: String
    var operations: [ChangeOperation]
    /// The row each updated or deleted object was read from (optimistic conflict detection).
    var readRows: [UInt64: Row]
    var mergePolicy: MergePolicy
    /// Inserted objects that take over an existing object with the same unique values instead of failing:
    /// key → index into the entity's ``EntityDescription/uniqueConstraints``.
    var upserts: [UInt64: Int] = [:]
}

/// What a commit did.
struct CommitResult: Sendable {
    var transactionID: UInt64
    /// The committed row (or `nil` when deleted) of every object the changeset touched.
    var rows: [UInt64: Row?]
    /// Inserted keys that were merged into existing objects (upserts): new key → existing key.
    var mergedKeys: [UInt64: UInt64]
}
