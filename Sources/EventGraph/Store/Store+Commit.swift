import LogFormat

extension Store {
    /// Commits one changeset: resolves upserts and conflicts against the committed state and the saves queued
    /// before it, moves large binary values to blobs, checks uniqueness and queues the changeset in the log — all
    /// under the commit lock; then waits, without the lock, until the log has made it durable (concurrent saves
    /// share one sync), and installs it and every earlier queued save, in order. All or nothing.
    ///
    /// Nothing changes (neither the log nor the snapshot) when this throws before queuing; when the log fails to
    /// make the changeset durable, nothing is installed and the store refuses further saves until it is reopened.
    func commit(_ request: CommitRequest) throws(EventGraphError) -> CommitResult {
        guard !isReadOnly else { throw EventGraphError(.readOnly, "the store is read-only") }
        requireOwnObjects(request)
        let (queued, staged, permanentIdentities) = try withCommitLock {
            queue throws(EventGraphError) -> (QueuedTransaction, StagedChanges, [ObjectIdentity: ObjectIdentity]) in
            let prepared = try prepare(request, queue)
            return (try enqueue(prepared, in: &queue), prepared.staged, prepared.permanentIdentities)
        }
        do {
            try backend.waitUntilDurable(queued)
        } catch {
            withCommitLock { queue in
                // This save and every later queued one never become visible; earlier ones are installed by their
                // own (successful) waits.
                if queue.failure == nil { queue.failure = error }
                queue.queued.removeAll { $0.transactionID >= queued.transactionID }
            }
            throw error
        }
        installDurable(through: queued.transactionID)
        checkpointIfDue()
        return Self.result(of: queued.transactionID, staged, permanentIdentities)
    }

    /// What a commit did, from its transaction and its staged rows.
    static func result(
        of transactionID: UInt64, _ staged: StagedChanges, _ permanentIdentities: [ObjectIdentity: ObjectIdentity]
    ) -> CommitResult {
        let rows = staged.changes.map { change in
            (identity: ObjectIdentity(storeIndex: Self.ownStoreIndex, key: change.key), row: change.row)
        }
        return CommitResult(transactionID: transactionID, rows: rows, permanentIdentities: permanentIdentities)
    }

    /// A changeset ready to be queued: validated against the committed state and the saves queued before it,
    /// encoded, with its blobs; nothing is written yet.
    struct PreparedCommit {
        var transactionID: UInt64
        var changeset: Changeset
        var payload: [UInt8]
        /// The payload's frames, compressed and checksummed beside the save's staging (a large save's), or `nil`:
        /// the log encodes them when the changeset is queued.
        var encodedPayload: EncodedTransactionFrames?
        var blobs: [[UInt8]]
        var staged: StagedChanges
        var permanentIdentities: [ObjectIdentity: ObjectIdentity]
        /// The checkpoint chunks it changes, held decoded until it is installed (or dropped).
        var pins: ChunkPins?
        /// The unique tuples its objects give up (``CommitQueue/releasedTuples(of:in:model:)``).
        var releasedTuples: [UniqueKey] = []
        /// The unique tuples its new rows take, each with the key of the object that takes it (the uniqueness
        /// check's table, handed on to the queue's overlay and, for a staged insertion, to the install).
        var claimedTuples: [UniqueKey: UInt64] = [:]
        /// Whether every object it changes is new (`StoreState.stageInsertion` staged it).
        var isInsertion = false
    }

    /// Resolves upserts and conflicts, moves large binary values to blobs, checks uniqueness and encodes the
    /// changeset (the next transaction of `queue`, one part of `crossStore` when given), under the commit lock;
    /// changes nothing.
    func prepare(_ request: CommitRequest, _ queue: CommitQueue, crossStore: CrossStoreTransaction? = nil)
        throws(EventGraphError) -> PreparedCommit
    {
        let model = self.model
        guard !queue.isClosed else { throw EventGraphError(.closed, "the store is closed") }
        if let failure = queue.failure {
            throw EventGraphError(
                .log, "the store refuses saves after the log failed (\(failure.message)); reopen it to recover")
        }
        let pins = try prepareState(for: request.operations)
        var operations = request.operations
        // The last ID comes from the log, which may end at the largest one.
        guard queue.lastTransactionID < UInt64.max else {
            throw EventGraphError(
                LogFormatError(
                    .limitExceeded,
                    "the store is full: its last transaction ID is \(queue.lastTransactionID), the largest there "
                        + "is; no further save can be numbered"))
        }
        let transactionID = queue.lastTransactionID + 1
        if let exhausted = request.operations.lazy.compactMap(Self.exhaustedInsert).first {
            throw EventGraphError(
                LogFormatError(
                    .limitExceeded,
                    "the store is full: it has handed out every object key, so the new "
                        + "\(model.entities[Int(exhausted.entityIndex)].name) cannot be saved"))
        }
        let commitTimeMicroseconds = max(Self.nowMicroseconds(), queue.lastCommitTimeMicroseconds)
        let nextKey = keyWatermark
        func makeChangeset(_ operations: [ChangeOperation]) -> Changeset {
            Changeset(
                transactionID: transactionID, commitTimeMicroseconds: commitTimeMicroseconds, author: request.author,
                nextKey: nextKey, foreignStores: request.foreignStores, operations: operations,
                sequenceReservations: request.sequenceReservations, crossStore: crossStore)
        }
        // A save of new objects only (a bulk insert) is checked and staged in one pass when it can be: it then
        // needs no upsert, conflict resolution, inverse repair or blob, and its operations stay as they are — so a
        // large one is encoded on another core meanwhile (dropped if the pass refuses it).
        let mayBeInsertion = request.upserts.isEmpty && request.foreignStores.isEmpty && !hasExternalStorage
        var changeset = makeChangeset(operations)
        var encoding =
            mayBeInsertion && operations.count >= BackgroundEncoding.minimumObjectCount
                && operations.allSatisfy({ if case .insert = $0 { true } else { false } })
            ? encodeAside(changeset) : nil
        // A save that fails before it takes its frames leaves them to nobody: the encoding thread stops taking them.
        defer { encoding?.frames?.abandon() }
        let stagedInsertion =
            mayBeInsertion
            ? state.withLock { state in
                state.stageInsertion(
                    operations, model: model, version: transactionID, overlay: queue, checksInverses: hasInverses)
            } : nil
        var permanentIdentities: [ObjectIdentity: ObjectIdentity] = [:]
        var blobs: [[UInt8]] = []
        if stagedInsertion == nil {
            permanentIdentities = try resolveUpserts(&operations, request.upserts, queue)
            let pinned = try resolveConflicts(&operations, request, queue)
            repairInverses(&operations, pinned: pinned, queue)
            externalize(&operations, transactionID: transactionID, blobs: &blobs)
            changeset = makeChangeset(operations)
            // Encoded beside the staging and the uniqueness check below (the first encoding's frames are not).
            encoding?.frames?.abandon()
            encoding = operations.count >= BackgroundEncoding.minimumObjectCount ? encodeAside(changeset) : nil
        }
        let staged: StagedChanges
        if let stagedInsertion {
            staged = stagedInsertion
        } else {
            staged = try state.withLock { state throws(EventGraphError) in
                // Rows keep references in the state's own table of foreign stores (unchanged, and not copied,
                // when the changeset names none).
                let localized = state.localize(changeset)
                return try state.stage(localized, model: model, overlay: queue)
            }
        }
        // The holder lookups may read checkpoint chunks (a stored uniqueness index, the objects it names): one that
        // cannot be loaded fails the save here, out of the lock, before anything of it is queued.
        let (releasedTuples, claimedTuples) = try state.withLock {
            state throws(EventGraphError) -> ([UniqueKey], [UniqueKey: UInt64]) in
            var claimed: [UniqueKey: UInt64] = [:]
            let failures = try uniquenessFailures(staged, in: state, queue, claimed: &claimed)
            guard failures.isEmpty else {
                throw EventGraphError(
                    .uniqueness, "the save would violate \(failures.count) uniqueness constraint(s)", failures: failures
                )
            }
            // The objects of a staged insertion are all new (`stageInsertion` proved it): none gives up a tuple.
            if stagedInsertion != nil { return ([], claimed) }
            return (try queue.releasedTuples(of: staged, in: state, model: model), claimed)
        }
        let payload: [UInt8]
        var encodedPayload: EncodedTransactionFrames?
        do throws(LogFormatError) {
            if let encoding {
                // The frames the encoding thread has not compressed yet are compressed here, on this thread.
                encodedPayload = try encoding.frames?.encodedFrames()
                payload = try encoding.payload.value()
            } else {
                payload = try changeset.encoded()
            }
        } catch {
            throw EventGraphError(error)
        }
        return PreparedCommit(
            transactionID: transactionID, changeset: changeset, payload: payload, encodedPayload: encodedPayload,
            blobs: blobs, staged: staged,
            permanentIdentities: permanentIdentities, pins: pins, releasedTuples: releasedTuples,
            claimedTuples: claimedTuples, isInsertion: stagedInsertion != nil)
    }

    typealias BackgroundEncoding = BackgroundWork<[UInt8], LogFormatError>

    /// A large changeset's payload, encoded on a thread of its own, and its frames, which that thread then
    /// compresses and checksums until the saving thread takes the rest (``SharedFrameEncoding``).
    struct PayloadEncoding {
        var payload: BackgroundEncoding
        /// `nil` for a log that encodes the frames when they are queued.
        var frames: SharedFrameEncoding?
    }

    /// Starts encoding a large changeset on a thread of its own (its bytes are those ``Changeset/encoded()`` returns
    /// on any thread), then its frames (their bytes are those the log would make of the payload when it is queued).
    /// Called with the commit lock held.
    private func encodeAside(_ changeset: Changeset) -> PayloadEncoding {
        let frames = backend.sharedFrameEncoding(forTransaction: changeset.transactionID)
        let payload = BackgroundEncoding("EventGraph payload encoding") { () throws(LogFormatError) in
            let payload: [UInt8]
            do throws(LogFormatError) {
                payload = try changeset.encoded()
            } catch {
                frames?.fail(error)
                throw error
            }
            frames?.supply(payload)
            frames?.help()
            return payload
        }
        return PayloadEncoding(payload: payload, frames: frames)
    }

    /// Queues a prepared changeset in the log (no I/O is waited for) and its effects in the queue's overlay.
    func enqueue(_ prepared: PreparedCommit, in queue: inout CommitQueue) throws(EventGraphError) -> QueuedTransaction {
        let queued = try backend.enqueueTransaction(
            id: prepared.transactionID, payload: prepared.payload, blobs: prepared.blobs,
            encodedPayload: prepared.encodedPayload)
        let entry = CommitQueue.Entry(
            transactionID: prepared.transactionID, commitTimeMicroseconds: prepared.changeset.commitTimeMicroseconds,
            nextKey: prepared.changeset.nextKey, staged: prepared.staged, blobHandles: queued.blobHandles,
            uniqueKeys: [], changeset: prepared.changeset, pins: prepared.pins,
            newTuples: prepared.isInsertion ? prepared.claimedTuples : nil)
        queue.enqueue(entry, releasing: prepared.releasedTuples, claiming: prepared.claimedTuples)
        return queued
    }

    /// Checks that a request names only this store's objects, and only stores its table of foreign stores has: a
    /// store commits its own changeset, and a coordinator of several stores splits a request per store first.
    func requireOwnObjects(_ request: CommitRequest) {
        let foreignCount = request.foreignStores.count
        func isOwn(_ reference: ObjectReference) -> Bool { reference.storeIndex == Self.ownStoreIndex }
        func isKnown(_ reference: ObjectReference) -> Bool { Int(reference.storeIndex) <= foreignCount }
        func isOwn(_ change: PropertyChange) -> Bool {
            switch change.value {
            case .attribute: true
            case .toOne(let target): target.map(isKnown) ?? true
            case .toMany(let targets): targets.allSatisfy(isKnown)
            }
        }
        // The request is alive and unchanged for the pass: its operations are read in place by the prefetches.
        let operations = SavePrefetch.elements(of: request.operations)
        for (position, operation) in request.operations.enumerated() {
            // Asked for a few operations ahead: each insert's values and to-many lists, cold in a bulk save (see
            // `SavePrefetch`).
            SavePrefetch.prefetchAhead(in: operations, from: position, lists: true, strings: false)
            let own =
                switch operation {
                case .insert(let reference, let changes), .update(let reference, let changes):
                    isOwn(reference) && changes.allSatisfy(isOwn)
                case .relate(let reference, _, let added, let removed):
                    isOwn(reference) && added.allSatisfy(isKnown) && removed.allSatisfy(isKnown)
                case .delete(let reference):
                    isOwn(reference)
                }
            precondition(own, "a commit into store \(storeUUID) names an object of another store: \(operation)")
        }
    }

    /// Installs every queued save up to `transactionID` (all durable: the log is synced in order), in order, and
    /// publishes them to the commit observers (delivered after the lock is released).
    private func installDurable(through transactionID: UInt64) {
        withCommitLock { queue in installQueued(through: transactionID, in: &queue) }
        observers.deliverPending()
    }

    /// Installs every queued save up to `transactionID` under the commit lock, and publishes them to the commit
    /// observers (delivered by ``CommitObservers/deliverPending()`` once the lock is released).
    func installQueued(through transactionID: UInt64, in queue: inout CommitQueue) {
        let model = self.model
        var done = queue.dequeue(through: transactionID)
        guard !done.isEmpty else { return }
        state.withLock { state in
            for position in done.indices {
                // The install may adopt the tuples' table as the uniqueness index: the entry lets go of it, so that
                // the index is not copied at its next change.
                let newTuples = done[position].newTuples
                done[position].newTuples = nil
                let entry = done[position]
                state.install(entry.staged, model: model, newTuples: newTuples)
                for (index, handle) in entry.blobHandles.enumerated() {
                    state.blobHandles[BlobKey(transactionID: entry.transactionID, index: UInt32(index))] = handle
                }
                state.lastTransactionID = entry.transactionID
                state.lastCommitTimeMicroseconds = entry.commitTimeMicroseconds
                state.nextKey = entry.nextKey
            }
        }
        observers.publish(done.lazy.map(\.changeset))
    }

    /// The permanent ID of a reference in this store.
    func objectID(for reference: ObjectReference) -> ObjectID {
        ObjectID(storeUUID: storeUUID, entityName: model.entities[Int(reference.entityIndex)].name, key: reference.key)
    }
}
