import Foundation
import LogFormat

/// Automatic merging: a context keeps its registered objects current with changes made elsewhere.
extension ObjectContext {
    /// Whether changes made elsewhere refresh this context's registered objects (off by default).
    ///
    /// For a root context (one made by the container), "elsewhere" is every transaction another context commits:
    /// they are collected as they commit, and merged at this context's next ``processPendingChanges()`` (which
    /// ``save()`` calls first), in this context's own isolation domain; ``ModelContainer/mainContext`` also merges
    /// each one as it arrives, in a task on the main actor. For a child, it is every change of its
    /// parent's view — the parent's saves, merges, rollbacks, processed changes, and what a sibling pushes into
    /// it — merged at once, since a child lives in its parent's isolation domain.
    ///
    /// A merge refreshes registered objects only: an object without unsaved changes takes the new values, and one
    /// deleted elsewhere becomes a deleted fault (``ManagedObject/isDeleted``, reading its defaults), as objects
    /// deleted by this context's own save do. An object with unsaved changes keeps them, by the ``mergePolicy``:
    /// - ``MergePolicy/objectWins``: its changes stand over the new values of its other properties;
    /// - ``MergePolicy/storeWins``: properties changed elsewhere take the new values (its own changes of them are
    ///   dropped), its other changes stand;
    /// - ``MergePolicy/error``: the object keeps reading the values it read, so that its save reports the
    ///   conflict.
    /// A deleted object with unsaved changes is left for the save to settle. Each merge is reported as
    /// ``ContextChanges/Reason/merged(transactionID:)``, with every change it brought (also of objects the context
    /// does not hold, for a view that must add them).
    public var automaticallyMergesChangesFromParent: Bool {
        get { changeTracking.mergesAutomatically }
        set {
            guard newValue != changeTracking.mergesAutomatically else { return }
            changeTracking.mergesAutomatically = newValue
            if let parent = parentContext {
                if newValue {
                    changeTracking.parentRegistration = parent.changeTracking.add { [weak self] changes, pushedBy in
                        guard let self else { return false }
                        self.mergeParentChanges(changes, pushedBy: pushedBy)
                        return true
                    }
                } else if let registration = changeTracking.parentRegistration {
                    parent.changeTracking.remove(registration)
                    changeTracking.parentRegistration = nil
                }
            } else {
                changeTracking.inbox =
                    newValue ? MergeInbox(stores: rootStores, wakeUp: changeTracking.scheduleMerge) : nil
            }
        }
    }

    /// Merges the transactions collected for a root context since its last processing point.
    func mergeCommittedTransactions() {
        guard let inbox = changeTracking.inbox else { return }
        for (storeUUID, transaction) in inbox.take() {
            let key = StoreTransaction(storeUUID: storeUUID, transactionID: transaction.transactionID)
            if changeTracking.ownTransactions.remove(key) != nil { continue }
            merge(transaction.changes, reason: .merged(transactionID: transaction.transactionID), transactions: [key])
        }
    }

    /// Merges a change of the parent's view into a child, unless the child's own push caused it.
    private func mergeParentChanges(_ changes: ContextChanges, pushedBy: ObjectIdentifier?) {
        guard pushedBy != ObjectIdentifier(parentStore) else { return }
        var transactionID: UInt64?
        if case .merged(let merged) = changes.reason { transactionID = merged }
        merge(changes.changes, reason: .merged(transactionID: transactionID), transactions: changes.transactions)
    }

    /// Refreshes the registered objects that `changes` name, then reports the merge.
    private func merge(
        _ changes: [CommittedTransaction.Change], reason: ContextChanges.Reason, transactions: [StoreTransaction] = []
    ) {
        for change in changes where change.kind != .inserted {
            guard let storeIndex = parentStore.storeIndex(of: change.objectID.storeUUID),
                let object = registered[ObjectIdentity(storeIndex: storeIndex, key: change.objectID.key)],
                !object.flags.contains(.isInserted), !object.flags.contains(.isDeleted),
                !object.flags.contains(.isDead)
            else { continue }
            refreshMerged(object, changedKeys: change.changedKeys)
        }
        guard changeTracking.hasObservers, !changes.isEmpty else { return }
        changeTracking.deliver(
            ContextChanges(contextName: name, reason: reason, changes: changes, transactions: transactions))
    }

    /// Brings one registered object to the latest values beneath, keeping its unsaved changes by the merge policy.
    private func refreshMerged(_ object: ManagedObject, changedKeys: Set<String>) {
        let entity = object.entity
        if object.hasPersistentChanges {
            switch mergePolicy {
            case .error: return
            case .objectWins: break
            case .storeWins:
                object.pending.removeAll { changedKeys.contains(entity.properties[$0.index].name) }
            }
        }
        let lookedUp: CommittedRow?
        do {
            lookedUp = try parentStore.lookUpCommittedRow(of: object.identity, entityIndex: entity.index)
        } catch {
            // The chunk that holds the object beneath cannot be read now (evicted, and its reads fail). A root's
            // merge reads resident chunks only: the objects a commit names are in chunks it made resident, and a
            // compaction keeps the state's chunks (`MergeChunkFailureTests`). A child's merge of a change its parent
            // made in memory (processed, rolled back) looks up an object whose chunk may be on disk. The object
            // becomes a fault that keeps its unsaved changes, as `refresh(_:mergeChanges: true)` leaves it: its next
            // read looks it up again (and ends the process if it still cannot be read, as any fault's does), and its
            // save throws the chunk's error.
            refresh(object, mergeChanges: true)
            return
        }
        guard let found = lookedUp else {
            if object.hasPersistentChanges { return }
            // Deleted elsewhere: a deleted fault, as the objects this context's own save deletes become.
            object.detach(
                Detachment(storeUUIDs: parentStore.storeUUIDs, contextName: name, reason: .deleted, model: model))
            registered[object.identity] = nil
            object.flags = [.isDead]
            object.pending.removeAll()
            object.row = nil
            return
        }
        if object.committed.map({ !$0.isSame(as: found.values) }) ?? true {
            object.committed = found.values
            object.loadedBlobs.removeAll()
        }
    }
}

/// Transactions committed by any context of the stores beneath a root context (one store, or each store of a
/// container with several), collected for the context to merge at its next processing point. Delivery happens on
/// the committing thread, so the queue is behind a lock; the context takes it in its own isolation domain.
final class MergeInbox: Sendable {
    private let registrations: [(store: Store, token: CommitObservers.Token)]
    private let queue: LockedValue<[(storeUUID: UUID, transaction: CommittedTransaction)]>

    /// Collects the transactions `stores` commit from now on; `wakeUp` runs after each arrives (on the committing
    /// thread, outside every lock), for a context that merges in its own domain as they come.
    init(stores: [Store], wakeUp: (@Sendable () -> Void)? = nil) {
        let queue = LockedValue<[(storeUUID: UUID, transaction: CommittedTransaction)]>([])
        self.queue = queue
        // The observers hold the queue, not the inbox, so that releasing the inbox unregisters them.
        registrations = stores.map { store in
            let storeUUID = store.storeUUID
            let (token, _) = store.observeCommits { transaction in
                queue.withLock { $0.append((storeUUID, transaction)) }
                wakeUp?()
            }
            return (store, token)
        }
    }

    deinit {
        for (store, token) in registrations { store.removeCommitObserver(token) }
    }

    /// The transactions collected since the last call, each with the store that committed it, in transaction order
    /// per store.
    func take() -> [(storeUUID: UUID, transaction: CommittedTransaction)] {
        queue.withLock { queue in
            defer { queue.removeAll() }
            return queue
        }
    }
}
