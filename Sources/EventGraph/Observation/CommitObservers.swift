import Foundation
import LogFormat

/// The single point where committed transactions become visible to other contexts, and the observers told so.
///
/// Every install of a durable changeset goes through ``publish(_:)``, called under the store's commit lock in
/// transaction order, right after the rows are in the committed state. The installing thread then calls
/// ``deliverPending()`` with no lock held, which hands each published transaction to the observers registered when
/// it was published: exactly once, in transaction order, one transaction at a time, never under a lock (an observer
/// may read the store, save, or take its own locks). When another thread is already delivering, that thread
/// delivers the new transactions too before it stops, so a save may return before observers have seen it; they
/// see it soon after, and always after every earlier transaction.
///
/// The container's change notifications (``ModelContainer/observeTransactions(_:)``,
/// ``ModelContainer/transactions``) are built on it; live results (issue 13) will be.
final class CommitObservers: Sendable {
    /// Called with each committed transaction; runs on the thread that delivers, outside every lock, so it should
    /// hand the value on rather than do long work.
    typealias Observer = @Sendable (CommittedTransaction) -> Void

    /// Identifies a registration, to remove it.
    struct Token: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    /// Published transactions waiting for delivery, each with the observers registered when it was published.
    private struct Pending: Sendable {
        var changeset: Changeset
        var observers: [Observer]
    }

    private struct State: Sendable {
        var observers: [(token: Token, observer: Observer)] = []
        var nextID: UInt64 = 0
        var pending: [Pending] = []
        /// Whether a thread is in ``deliverPending()``'s loop; it takes every transaction published meanwhile.
        var isDelivering = false
    }

    private let model: ObjectModel
    private let storeUUID: UUID
    /// A leaf lock: taken under the commit lock by ``publish(_:)`` and ``add(_:)``; nothing is taken, and no
    /// observer is called, while it is held.
    private let state = LockedValue(State())

    init(model: ObjectModel, storeUUID: UUID) {
        self.model = model
        self.storeUUID = storeUUID
    }

    /// Registers `observer` for every transaction published after this call. Call it under the commit lock, so
    /// that "after" is well defined: the first transaction it sees follows the last one installed.
    func add(_ observer: @escaping Observer) -> Token {
        state.withLock { state in
            let token = Token(id: state.nextID)
            state.nextID += 1
            state.observers.append((token, observer))
            return token
        }
    }

    /// Unregisters an observer. It may still receive the transactions published before this call.
    func remove(_ token: Token) {
        state.withLock { state in state.observers.removeAll { $0.token == token } }
    }

    /// Records transactions just installed in the committed state, in transaction order. Call it under the commit
    /// lock, in the same critical section as the install; costs nothing when no observer is registered.
    func publish(_ changesets: some Collection<Changeset>) {
        guard !changesets.isEmpty else { return }
        state.withLock { state in
            guard !state.observers.isEmpty else { return }
            let observers = state.observers.map(\.observer)
            for changeset in changesets { state.pending.append(Pending(changeset: changeset, observers: observers)) }
        }
    }

    /// Delivers every published transaction not yet delivered, unless another thread is doing so. Call it with no
    /// lock held, after ``publish(_:)``.
    func deliverPending() {
        var batch = state.withLock { state -> [Pending] in
            guard !state.isDelivering, !state.pending.isEmpty else { return [] }
            state.isDelivering = true
            defer { state.pending = [] }
            return state.pending
        }
        while !batch.isEmpty {
            for item in batch {
                let transaction = CommittedTransaction(item.changeset, model: model, storeUUID: storeUUID)
                for observer in item.observers { observer(transaction) }
            }
            // Stop only when nothing was published meanwhile, decided under the lock: a publisher that found this
            // thread delivering left its transactions to it.
            batch = state.withLock { state -> [Pending] in
                guard !state.pending.isEmpty else {
                    state.isDelivering = false
                    return []
                }
                defer { state.pending = [] }
                return state.pending
            }
        }
    }
}
