import LogFormat

// What a fetched property asks of the object store beneath its context: whether its cached result may be stale,
// and whether the stores its fetch needs are there.

extension ObjectStore {
    /// A store of one: its last transaction.
    var transactionStamp: [UInt64] { [lastTransactionID] }

    /// A store of one holds every configuration's objects.
    func isMounted(configuration name: String) -> Bool { true }
}

extension StoreCoordinator {
    /// Every mounted store's last transaction: a commit in any of them changes it (``lastTransactionID``, the
    /// largest, does not change when a store behind another commits).
    var transactionStamp: [UInt64] { stores.map(\.lastTransactionID) }

    /// Whether the store of a configuration is one of the mounted stores.
    func isMounted(configuration name: String) -> Bool { store(ofConfiguration: name) != nil }
}

extension ParentContextStore {
    /// The stamp of the stores beneath the parent, and how many child saves the parent has taken (a sibling's save
    /// changes what this child reads through the parent).
    var transactionStamp: [UInt64] { parent.parentStore.transactionStamp + [parent.childSaveCount] }

    func isMounted(configuration name: String) -> Bool { parent.parentStore.isMounted(configuration: name) }
}
