import LogFormat

/// Per-context change notifications: what a context's unsaved changes did since the last report, what its save
/// committed, what a child pushed into it, what a rollback undid and what a merge brought in.
extension ObjectContext {
    /// Calls `handler` with every report of this context from now on (see ``ContextChanges/Reason``).
    ///
    /// The handler runs synchronously in the context's isolation domain, at the point that reports: inside
    /// ``processPendingChanges()``, ``save()``, a child's save, ``rollback()`` or a merge. It may use the context
    /// (a nested report is delivered at once). Keep the returned observation: releasing it cancels it.
    ///
    /// ```swift
    /// let observation = context.observeChanges { changes in
    ///     for id in changes.deletedIDs { print("deleted", id) }
    /// }
    /// ```
    public func observeChanges(_ handler: @escaping (ContextChanges) -> Void) -> ContextChangesObservation {
        let id = changeTracking.add { changes, _ in
            handler(changes)
            return true
        }
        return ContextChangesObservation(tracking: changeTracking, id: id)
    }

    /// Every report of this context from the moment this property is read, as an asynchronous sequence.
    ///
    /// Each read makes a new sequence with its own registration; reports are buffered until consumed (a slow
    /// consumer costs memory, never a lost or reordered report). The registration ends when the sequence's consumer
    /// is gone (its task cancelled, or the sequence released): it is removed at the context's next report or
    /// processing point, without waiting for a change.
    ///
    /// ```swift
    /// for await changes in context.changes {
    ///     print(changes.reason, changes.insertedIDs.count, changes.updatedIDs.count)
    /// }
    /// ```
    public var changes: AsyncStream<ContextChanges> {
        let (stream, continuation) = AsyncStream.makeStream(of: ContextChanges.self, bufferingPolicy: .unbounded)
        changeTracking.add(continuation) { changes, _ in
            if case .terminated = continuation.yield(changes) { return false }
            return true
        }
        return stream
    }

    /// Reports the unsaved changes made since the last report (``ContextChanges/Reason/processed``), and merges
    /// transactions committed by other contexts when ``automaticallyMergesChangesFromParent`` is on.
    ///
    /// ``save()`` does this first. Nothing is reported when nothing changed or nobody observes.
    public func processPendingChanges() {
        mergeCommittedTransactions()
        reportPendingChanges(.processed)
    }

    // MARK: - Reporting

    /// Reports what the unsaved changes did since the last report. The cost is proportional to the unsaved
    /// changes, and nothing when nobody observes.
    func reportPendingChanges(_ reason: ContextChanges.Reason, pushedBy: ObjectIdentifier? = nil) {
        let tracking = changeTracking
        guard tracking.hasObservers else { return }
        let values = contextChangeValues()
        var changes: [CommittedTransaction.Change] = []
        var seen: Set<ObjectIdentity> = []
        for object in insertedList + changedList + deletedList where seen.insert(object.identity).inserted {
            let identity = object.identity
            let before = tracking.reported[identity]
            let isInserted = object.flags.contains(.isInserted)
            let isGone = object.flags.contains(.isDeleted) || object.flags.contains(.isDead)
            let now = object.pending.filter { object.entity.isPersistentProperty[$0.index] }
            var change = CommittedTransaction.Change(objectID: object.objectID, kind: .updated, changedKeys: [])
            if isGone {
                // An insert never reported and deleted again is nothing to anyone.
                guard before?.kind != .deleted, before != nil || !isInserted else { continue }
                change.kind = .deleted
                tracking.reported[identity] =
                    isInserted
                    ? nil : ContextChangeTracking.Reported(objectID: change.objectID, kind: .deleted, values: [])
            } else {
                let changed = now.filter { entry in
                    !(before?.values.contains { $0.index == entry.index && $0.value == entry.value } ?? false)
                }
                if before == nil && isInserted { change.kind = .inserted } else if changed.isEmpty { continue }
                let named = changed.map { (object.entity.properties[$0.index].name, $0.value) }
                change.changedKeys = Set(named.map(\.0))
                values.record(named, into: &change)
                tracking.reported[identity] = ContextChangeTracking.Reported(
                    objectID: change.objectID, kind: before?.kind ?? change.kind, values: now)
            }
            changes.append(change)
        }
        guard !changes.isEmpty else { return }
        tracking.deliver(ContextChanges(contextName: name, reason: reason, changes: changes), pushedBy: pushedBy)
    }

    /// Reports a save that committed `request` (``ContextChanges/Reason/saved(transactionID:)``); call it once the
    /// context holds the saved state, so inserted objects are named by their permanent IDs.
    func reportSave(of request: CommitRequest, result: CommitResult) {
        let isRoot = !(parentStore is ParentContextStore)
        var transactions: [StoreTransaction] = []
        if isRoot {
            // A commit through a coordinator of several stores names a transaction per store it touched.
            let committed = parentStore is Store ? [0: result.transactionID] : result.storeTransactionIDs
            let storeUUIDs = parentStore.storeUUIDs
            for (storeIndex, transactionID) in committed.sorted(by: { $0.key < $1.key }) {
                let transaction = StoreTransaction(
                    storeUUID: storeUUIDs[Int(storeIndex)], transactionID: transactionID)
                changeTracking.ownTransactions.insert(transaction)
                transactions.append(transaction)
            }
        }
        changeTracking.reported.removeAll()
        guard changeTracking.hasObservers else { return }
        let permanent = result.permanentIdentities
        let values = contextChangeValues(renaming: permanent)
        let changes = CommittedTransaction.changes(of: request.operations, model: model, values: values)
        // With several stores, the result's own ID is only the latest of any store: the first store's is reported.
        let reason = ContextChanges.Reason.saved(transactionID: isRoot ? transactions.first?.transactionID : nil)
        changeTracking.deliver(
            ContextChanges(contextName: name, reason: reason, changes: changes, transactions: transactions))
    }

    /// Reports what a rollback undid of the changes reported before it, and forgets them. Call it once the objects
    /// are reverted: an update undone carries the committed values the object holds again, unless its checkpoint
    /// chunk cannot be read (then only its changed keys).
    func reportRollback() {
        let tracking = changeTracking
        defer { tracking.reported.removeAll() }
        guard tracking.hasObservers, !tracking.reported.isEmpty else { return }
        let values = contextChangeValues()
        var changes: [CommittedTransaction.Change] = []
        for (identity, reported) in tracking.reported.sorted(by: { $0.key.key < $1.key.key }) {
            var change = CommittedTransaction.Change(objectID: reported.objectID, kind: .updated, changedKeys: [])
            switch reported.kind {
            case .inserted: change.kind = .deleted
            case .deleted: change.kind = .inserted
            case .updated:
                guard let object = registered[identity] else { continue }
                let entity = object.entity
                change.changedKeys = Set(reported.values.map { entity.properties[$0.index].name })
                guard let committed = object.committed else { break }
                // Read with the object's checkpoint chunk pinned: a chunk that cannot be read leaves the values
                // out (a property getter's read would end the process), and the object reads them once it can.
                let chunk = committed.checkpointChunk
                do { try chunk?.pin() } catch { break }
                defer { chunk?.unpin() }
                let named = reported.values.map { (entity.properties[$0.index].name, committed.value(at: $0.index)) }
                values.record(named, into: &change)
            }
            changes.append(change)
        }
        guard !changes.isEmpty else { return }
        tracking.deliver(ContextChanges(contextName: name, reason: .rolledBack, changes: changes))
    }

    /// Names references as this context does: by its object store's table of stores, temporary where unsaved.
    func contextChangeValues(renaming permanent: [ObjectIdentity: ObjectIdentity] = [:]) -> ChangeValues {
        ChangeValues { [unowned self] reference in
            var reference = reference
            if let renamed = permanent[reference.identity] {
                reference = ObjectReference(renamed, entityIndex: Int(reference.entityIndex))
            }
            return objectIDs(of: [reference])[0]
        }
    }
}
