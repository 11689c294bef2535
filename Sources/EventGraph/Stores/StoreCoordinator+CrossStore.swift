import Dispatch
import LogFormat

extension StoreCoordinator {
    /// Commits a save that touches several stores in every one of them or in none, also across a crash
    /// (`Docs/FileFormat.md`, §3.6):
    ///
    /// 1. it takes the participants' commit locks in ascending order of store UUID (every save across stores takes
    ///    them in this order, so two of them never deadlock) and holds them to the end, so that nothing is appended
    ///    to a participant after its part until every part is durable;
    /// 2. it prepares every part (conflicts, uniqueness, inverses): a refusal here has written nothing anywhere;
    /// 3. it queues every part, each changeset naming the save and every participant with its transaction ID;
    /// 4. it writes the parts in that order, then syncs all the logs at once (one sync round, not one per store);
    /// 5. it installs every part, and only then returns.
    ///
    /// A failure in steps 3–4 cuts every part that was queued off its log again (best effort, as a failed write cuts
    /// its batch) and poisons every participant that queued one (it refuses saves and writes no seal); opening the
    /// stores together then decides whatever the logs still hold (FileFormat.md §3.6).
    func commitAcrossStores(_ parts: [UInt32: CommitRequest]) throws(EventGraphError) -> CommitResult {
        let order = parts.keys.sorted { stores[Int($0)].storeUUID.logUUID < stores[Int($1)].storeUUID.logUUID }
        let participants = order.map { stores[Int($0)] }
        let requests = order.map { parts[$0]! }
        for (store, request) in zip(participants, requests) {
            guard !store.isReadOnly else { throw EventGraphError(.readOnly, "the store is read-only") }
            store.requireOwnObjects(request)
        }
        let id = LogUUID.random()
        let committed = try Self.withCommitLocks(of: participants[...], holding: []) {
            queues throws(EventGraphError) -> [CommitResult] in
            let record = CrossStoreTransaction(
                id: id,
                participants: zip(participants, queues).map { store, queue in
                    CrossStoreTransaction.Participant(
                        storeUUID: store.storeUUID.logUUID, transactionID: queue.pointee.lastTransactionID &+ 1)
                })
            var prepared: [Store.PreparedCommit] = []
            for (position, store) in participants.enumerated() {
                prepared.append(try store.prepare(requests[position], queues[position].pointee, crossStore: record))
            }
            crossStoreStepObserver?(.prepared)
            var queued: [QueuedTransaction] = []
            do throws(EventGraphError) {
                for (position, store) in participants.enumerated() {
                    queued.append(try store.enqueue(prepared[position], in: &queues[position].pointee))
                }
                for (position, store) in participants.enumerated() {
                    try store.backend.waitUntilWritten(queued[position])
                    crossStoreStepObserver?(.written(participant: position))
                }
                try Self.syncAll(participants, queued)
                crossStoreStepObserver?(.synced)
            } catch {
                Self.abandon(queued, of: participants, queues, because: error)
                throw error
            }
            for (position, store) in participants.enumerated() {
                store.installQueued(through: queued[position].transactionID, in: &queues[position].pointee)
                // Under the commit lock, so that a compaction, which drains the queue, sees it.
                store.crossStoreParts.note(record, storeUUID: store.storeUUID.logUUID)
            }
            crossStoreStepObserver?(.installed)
            return prepared.map { Store.result(of: $0.transactionID, $0.staged, $0.permanentIdentities) }
        }
        for store in participants { store.observers.deliverPending() }
        var result = CommitResult(transactionID: 0, rows: [], permanentIdentities: [:])
        for (storeIndex, part) in zip(order, committed) { merge(part, fromStoreAt: storeIndex, into: &result) }
        result.transactionID = lastTransactionID
        return result
    }

    /// Runs `body` with the commit locks of `stores` held, taken in order, and a pointer to each one's queue.
    ///
    /// The pointers are valid only inside `body`, while every lock is held (each is the address of a queue for
    /// the duration of its lock's closure); they never leave it.
    private static func withCommitLocks<R>(
        of stores: ArraySlice<Store>, holding queues: [UnsafeMutablePointer<CommitQueue>],
        _ body: ([UnsafeMutablePointer<CommitQueue>]) throws(EventGraphError) -> R
    ) throws(EventGraphError) -> R {
        guard let store = stores.first else { return try body(queues) }
        return try store.withCommitLock { (queue: inout CommitQueue) throws(EventGraphError) -> R in
            try withUnsafeMutablePointer(to: &queue) { pointer throws(EventGraphError) -> R in
                try withCommitLocks(of: stores.dropFirst(), holding: queues + [pointer], body)
            }
        }
    }

    /// Waits until every participant's part is durable, all syncs at once: a save across stores costs one sync
    /// round, however many stores it touches.
    private static func syncAll(_ participants: [Store], _ queued: [QueuedTransaction]) throws(EventGraphError) {
        let failures = LockedValue<[EventGraphError?]>(Array(repeating: nil, count: participants.count))
        DispatchQueue.concurrentPerform(iterations: participants.count) { position in
            do throws(EventGraphError) {
                try participants[position].backend.waitUntilDurable(queued[position])
            } catch {
                failures.withLock { $0[position] = error }
            }
        }
        if let failure = failures.withLock({ $0.lazy.compactMap { $0 }.first }) { throw failure }
    }

    /// After a failure: no queued part is ever installed, and every participant that queued one refuses saves
    /// and its seal until the stores are opened together again, which decides the save from what the logs hold.
    private static func abandon(
        _ queued: [QueuedTransaction], of participants: [Store], _ queues: [UnsafeMutablePointer<CommitQueue>],
        because error: EventGraphError
    ) {
        let reason =
            "a save across stores failed (\(error.message)); reopen the stores together, which decides whether it "
            + "committed"
        for (position, transaction) in queued.enumerated() {
            participants[position].backend.poison(because: reason, discarding: transaction)
            if queues[position].pointee.failure == nil {
                queues[position].pointee.failure = EventGraphError(.log, reason)
            }
            queues[position].pointee.queued.removeAll { $0.transactionID >= transaction.transactionID }
        }
    }
}

/// A step of a save across stores, for tests that stop the process there (`Tests/KillNine`'s `cross-store` mode).
package enum CrossStoreCommitStep: Hashable, Sendable, CustomStringConvertible {
    /// Every part is prepared; nothing is queued or written.
    case prepared
    /// The parts of the participants up to this one (in ascending order of store UUID) are written, not synced.
    case written(participant: Int)
    /// Every part is durable; nothing is installed yet.
    case synced
    /// Every part is installed; the save has not returned yet.
    case installed

    package var description: String {
        switch self {
        case .prepared: "prepared"
        case .written(let participant): "written-\(participant)"
        case .synced: "synced"
        case .installed: "installed"
        }
    }
}
