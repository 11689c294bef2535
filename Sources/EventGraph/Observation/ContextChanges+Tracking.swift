public import Foundation
import LogFormat

/// A context's change observers and what it last reported, held by the context (``ObjectContext/changeTracking``).
///
/// Not `Sendable`: it lives and is used in its context's isolation domain only. The one thing other threads touch,
/// the transactions waiting to be merged, is behind a lock (``MergeInbox``).
final class ContextChangeTracking {
    /// A registered observer: called with each report and the object store whose push caused it (a child's, for
    /// ``ContextChanges/Reason/pushedByChild``), so a child can ignore its own push. Returns `false` to be removed
    /// (an `AsyncStream` whose consumer is gone).
    typealias Observer = (ContextChanges, _ pushedBy: ObjectIdentifier?) -> Bool

    /// What a report said last about an object with unsaved changes.
    struct Reported {
        /// The ID it was reported by (temporary for an inserted object).
        var objectID: ObjectID
        var kind: CommittedTransaction.Change.Kind
        /// The unsaved persistent values it reported.
        var values: [ManagedObject.PendingValue]
    }

    private(set) var observers: [(id: Int, observer: Observer)] = []
    private var nextID = 0
    /// What has been reported of the context's unsaved changes; empty after a save or rollback. Kept only while
    /// someone observes: without observers, the context does not pay for the comparison.
    var reported: [ObjectIdentity: Reported] = [:]
    /// Whether the context merges changes made elsewhere (``ObjectContext/automaticallyMergesChangesFromParent``).
    var mergesAutomatically = false
    /// For a root context that merges: committed transactions waiting for the context's next processing point.
    var inbox: MergeInbox?
    /// For a root context bound to an actor (the main context): schedules ``ObjectContext/mergeCommittedTransactions()``
    /// there, called by the inbox on the committing thread each time a transaction arrives.
    var scheduleMerge: (@Sendable () -> Void)?
    /// For a child that merges: its registration with its parent.
    var parentRegistration: Int?
    /// Transactions this context committed itself, not to be merged back when they arrive in ``inbox``.
    var ownTransactions: Set<StoreTransaction> = []
    /// Told when objects of the context change identity (a root's save merged an upsert into a committed object,
    /// see ``ObjectContext/renameInChildren(_:)``): results controllers re-place what they hold under the old one.
    private(set) var renameObservers: [(id: Int, observer: ([ObjectIdentity: ObjectIdentity]) -> Void)] = []

    /// Registrations whose consumer is gone: an `AsyncStream` ends on its consumer's thread (its task cancelled, or
    /// the sequence released), which must not touch this context's state; it notes its registration here, and the
    /// context drops it the next time it asks whether anyone observes, so that a context nobody observes any more
    /// stops paying for reports, and the stream's buffer is freed, without waiting for a report.
    private let finishedRegistrations = LockedValue<[Int]>([])

    var hasObservers: Bool {
        removeFinishedRegistrations()
        return !observers.isEmpty
    }

    func add(_ observer: @escaping Observer) -> Int {
        defer { nextID += 1 }
        observers.append((nextID, observer))
        return nextID
    }

    /// Registers an observer that stops when `continuation`'s consumer is gone, and makes that consumer's end remove
    /// the registration (see ``finishedRegistrations``).
    func add<Element>(_ continuation: AsyncStream<Element>.Continuation, _ observer: @escaping Observer) {
        let id = add(observer)
        let finished = finishedRegistrations
        continuation.onTermination = { _ in finished.withLock { $0.append(id) } }
    }

    func remove(_ id: Int) {
        observers.removeAll { $0.id == id }
    }

    /// Registers `observer` for the identities this context renames from now on (old → new).
    func addRenameObserver(_ observer: @escaping ([ObjectIdentity: ObjectIdentity]) -> Void) -> Int {
        defer { nextID += 1 }
        renameObservers.append((nextID, observer))
        return nextID
    }

    func removeRenameObserver(_ id: Int) {
        renameObservers.removeAll { $0.id == id }
    }

    /// Tells the rename observers that the context now holds the objects of `renamed`'s keys under its values.
    func deliverRenames(_ renamed: [ObjectIdentity: ObjectIdentity]) {
        guard !renamed.isEmpty else { return }
        for (_, observer) in renameObservers { observer(renamed) }
    }

    /// Calls every observer registered now, in registration order. An observer may save or process changes of the
    /// context (a nested report is delivered at once, depth first); one registered meanwhile starts at the next.
    func deliver(_ changes: ContextChanges, pushedBy: ObjectIdentifier? = nil) {
        removeFinishedRegistrations()
        var finished: [Int] = []
        for (id, observer) in observers where !observer(changes, pushedBy) { finished.append(id) }
        if !finished.isEmpty { observers.removeAll { finished.contains($0.id) } }
        if observers.isEmpty { reported.removeAll() }
    }

    private func removeFinishedRegistrations() {
        let finished = finishedRegistrations.withLock { finished in
            defer { finished.removeAll() }
            return finished
        }
        guard !finished.isEmpty else { return }
        observers.removeAll { finished.contains($0.id) }
        if observers.isEmpty { reported.removeAll() }
    }
}

/// A registration made by ``ObjectContext/observeChanges(_:)``: the handler is called until ``cancel()`` is called
/// or the observation is released.
///
/// Not `Sendable`: keep and cancel it in the context's isolation domain.
public final class ContextChangesObservation {
    private weak var tracking: ContextChangeTracking?
    private let id: Int

    init(tracking: ContextChangeTracking, id: Int) {
        self.tracking = tracking
        self.id = id
    }

    /// Stops calling the handler.
    public func cancel() {
        tracking?.remove(id)
    }

    deinit {
        tracking?.remove(id)
    }
}

/// One transaction of one store: transaction IDs are numbered per store, so with several stores an ID alone is
/// ambiguous.
public struct StoreTransaction: Hashable, Sendable {
    /// The store whose log holds the transaction.
    public var storeUUID: UUID
    /// The transaction's number in that store (1, 2, 3, …).
    public var transactionID: UInt64

    /// Names a transaction of a store.
    public init(storeUUID: UUID, transactionID: UInt64) {
        self.storeUUID = storeUUID
        self.transactionID = transactionID
    }
}
