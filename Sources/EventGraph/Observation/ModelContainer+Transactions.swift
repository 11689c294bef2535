public import Foundation
import LogFormat

/// A registration made by ``ModelContainer/observeTransactions(_:)``: the handler is called until ``cancel()`` is
/// called or the observation is released.
public final class TransactionObservation: Sendable {
    private let registrations: [(store: Store, token: CommitObservers.Token)]
    /// The last transaction committed before the registration in the container's first store: the handler sees
    /// every one after it, and the earlier ones are in ``ModelContainer/changes(after:)``. With several stores,
    /// ``registeredAfterTransactions`` has one per store.
    public let registeredAfterTransaction: UInt64
    /// For each store of the container (by its UUID), the last transaction committed before the registration: the
    /// handler sees every one after it, and the earlier ones are in ``ModelContainer/changes(afterEach:)``.
    public let registeredAfterTransactions: [UUID: UInt64]

    init(registrations: [(store: Store, token: CommitObservers.Token, after: UInt64)]) {
        self.registrations = registrations.map { ($0.store, $0.token) }
        registeredAfterTransaction = registrations.first?.after ?? 0
        registeredAfterTransactions = Dictionary(
            uniqueKeysWithValues: registrations.map { ($0.store.storeUUID, $0.after) })
    }

    /// Stops calling the handler. It may still be called for transactions committed before this call, when they
    /// are being delivered at that moment.
    public func cancel() {
        for (store, token) in registrations { store.removeCommitObserver(token) }
    }

    deinit {
        cancel()
    }
}

extension ModelContainer {
    /// Calls `handler` with every transaction committed after this call, by any context of this container, in any
    /// of its stores.
    ///
    /// Transactions arrive exactly once each, one at a time, once every context can see them, each store's in its
    /// transaction order (``CommittedTransaction/storeUUID`` says which store's; transaction IDs are numbered per
    /// store). A save across several stores arrives as one transaction per store, tied by
    /// ``CommittedTransaction/crossStoreParts``. The handler runs on the thread that delivers (usually the one
    /// whose save committed the transaction), outside every lock of the store: it may fetch or save, but should
    /// hand the value on rather than do long work, since it delays the next delivery. Keep the returned
    /// observation: releasing it cancels it.
    ///
    /// ```swift
    /// let observation = container.observeTransactions { transaction in
    ///     for change in transaction.changes where change.kind == .deleted { print(change.objectID) }
    /// }
    /// ```
    public func observeTransactions(_ handler: @escaping @Sendable (CommittedTransaction) -> Void)
        -> TransactionObservation
    {
        // Stores deliver on their own threads: one at a time is kept across stores by a queue of its own.
        let deliver: CommitObservers.Observer = stores.count == 1 ? handler : SerialDelivery(handler).receive
        return TransactionObservation(registrations: Store.observeCommits(of: stores, deliver))
    }

    /// Every transaction committed after this property is read, by any context, in any of the container's stores;
    /// each store's in its transaction order (as ``observeTransactions(_:)`` delivers them).
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
        let registrations = Store.observeCommits(of: stores) { continuation.yield($0) }
        continuation.onTermination = { _ in
            for (store, token, _) in registrations { store.removeCommitObserver(token) }
        }
        return stream
    }
}

/// Hands transactions delivered by several stores' threads to one handler one at a time, each store's in the
/// order it delivers them: the first thread to arrive delivers, and delivers what others queue meanwhile.
///
/// A handler that saves is given its own save's transactions after it returns, on the same thread (they are
/// queued, not delivered inside the call), as ``CommitObservers`` does for one store.
private final class SerialDelivery: Sendable {
    private struct State: Sendable {
        var queued: [CommittedTransaction] = []
        var isDelivering = false
    }

    private let handler: @Sendable (CommittedTransaction) -> Void
    private let state = LockedValue(State())

    init(_ handler: @escaping @Sendable (CommittedTransaction) -> Void) {
        self.handler = handler
    }

    @Sendable func receive(_ transaction: CommittedTransaction) {
        var next: CommittedTransaction? = state.withLock { state in
            state.queued.append(transaction)
            guard !state.isDelivering else { return nil }
            state.isDelivering = true
            return state.queued.removeFirst()
        }
        while let transaction = next {
            handler(transaction)
            next = state.withLock { state in
                guard !state.queued.isEmpty else {
                    state.isDelivering = false
                    return nil
                }
                return state.queued.removeFirst()
            }
        }
    }
}
