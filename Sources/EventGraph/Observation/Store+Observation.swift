extension Store {
    /// Registers `observer` for every transaction committed from now on, by any context, delivered as described
    /// in ``CommitObservers``. Returns the registration and the last transaction installed before it (the
    /// transactions up to it are in the log, for a consumer that must also see the earlier ones).
    func observeCommits(_ observer: @escaping CommitObservers.Observer) -> (CommitObservers.Token, UInt64) {
        withCommitLock { _ in (observers.add(observer), lastTransactionID) }
    }

    /// Registers `observer` with every store of `stores` at one instant: under all their commit locks, taken in
    /// ascending order of store UUID as a save across stores takes them, so that a save across stores is seen
    /// whole or not at all (never the part of one store without the other's).
    static func observeCommits(of stores: [Store], _ observer: @escaping CommitObservers.Observer)
        -> [(store: Store, token: CommitObservers.Token, after: UInt64)]
    {
        let ordered = stores.sorted { $0.storeUUID.logUUID < $1.storeUUID.logUUID }
        let registered = register(observer, with: ordered[...])
        // In the container's order of stores.
        return stores.compactMap { store in registered.first { $0.store === store } }
    }

    private static func register(_ observer: @escaping CommitObservers.Observer, with stores: ArraySlice<Store>)
        -> [(store: Store, token: CommitObservers.Token, after: UInt64)]
    {
        guard let store = stores.first else { return [] }
        return store.withCommitLock { _ in
            let token = store.observers.add(observer)
            return [(store, token, store.lastTransactionID)] + register(observer, with: stores.dropFirst())
        }
    }

    /// Stops delivering to an observer (it may still receive transactions already committed).
    func removeCommitObserver(_ token: CommitObservers.Token) {
        observers.remove(token)
    }
}
