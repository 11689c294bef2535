extension Store {
    /// Registers `observer` for every transaction committed from now on, by any context, delivered as described
    /// in ``CommitObservers``. Returns the registration and the last transaction installed before it (the
    /// transactions up to it are in the log, for a consumer that must also see the earlier ones).
    func observeCommits(_ observer: @escaping CommitObservers.Observer) -> (CommitObservers.Token, UInt64) {
        withCommitLock { _ in (observers.add(observer), lastTransactionID) }
    }

    /// Stops delivering to an observer (it may still receive transactions already committed).
    func removeCommitObserver(_ token: CommitObservers.Token) {
        observers.remove(token)
    }
}
