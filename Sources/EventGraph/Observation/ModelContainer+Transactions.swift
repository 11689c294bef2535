/// A registration made by ``ModelContainer/observeTransactions(_:)``: the handler is called until ``cancel()`` is
/// called or the observation is released.
public final class TransactionObservation: Sendable {
    private let store: Store
    private let token: CommitObservers.Token
    /// The last transaction committed before the registration: the handler sees every one after it, and the
    /// earlier ones are in ``ModelContainer/changes(after:)``.
    public let registeredAfterTransaction: UInt64

    init(store: Store, token: CommitObservers.Token, registeredAfterTransaction: UInt64) {
        self.store = store
        self.token = token
        self.registeredAfterTransaction = registeredAfterTransaction
    }

    /// Stops calling the handler. It may still be called for transactions committed before this call, when they
    /// are being delivered at that moment.
    public func cancel() {
        store.removeCommitObserver(token)
    }

    deinit {
        store.removeCommitObserver(token)
    }
}

extension ModelContainer {
    /// Calls `handler` with every transaction committed after this call, by any context of this container.
    ///
    /// Transactions arrive exactly once each, in transaction order, one at a time, once every context can see
    /// them. The handler runs on the thread that delivers (usually the one whose save committed the transaction),
    /// outside every lock of the store: it may fetch or save, but should hand the value on rather than do long
    /// work, since it delays the next delivery. Keep the returned observation: releasing it cancels it.
    ///
    /// ```swift
    /// let observation = container.observeTransactions { transaction in
    ///     for change in transaction.changes where change.kind == .deleted { print(change.objectID) }
    /// }
    /// ```
    public func observeTransactions(_ handler: @escaping @Sendable (CommittedTransaction) -> Void)
        -> TransactionObservation
    {
        let (token, registeredAfter) = store.observeCommits(handler)
        return TransactionObservation(store: store, token: token, registeredAfterTransaction: registeredAfter)
    }

    /// Every transaction committed after this property is read, by any context, in transaction order.
    ///
    /// Each read makes a new sequence with its own registration; it ends when the task iterating it is cancelled
    /// or the sequence is released. Transactions the iterating task has not consumed yet are buffered (a slow
    /// consumer costs memory, never a lost or reordered transaction).
    ///
    /// ```swift
    /// for await transaction in container.transactions {
    ///     print(transaction.transactionID, transaction.author, transaction.changes.count)
    /// }
    /// ```
    public var transactions: AsyncStream<CommittedTransaction> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: CommittedTransaction.self, bufferingPolicy: .unbounded)
        let (token, _) = store.observeCommits { continuation.yield($0) }
        continuation.onTermination = { [store] _ in store.removeCommitObserver(token) }
        return stream
    }
}
