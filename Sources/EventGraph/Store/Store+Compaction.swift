import Dispatch
import LogFormat
import Synchronization

/// What a compaction did.
public struct CompactionReport: Hashable, Sendable {
    /// The last transaction the checkpoint contains.
    public var lastTransactionID: UInt64
    /// How many live objects the checkpoint holds.
    public var objectCount: Int
    /// How many externally stored values were copied.
    public var blobCount: Int
    /// The digest of the state before and after (equal, or the rewrite is refused).
    public var stateDigest: StateDigest
    /// How many entity chunks were encoded from the live state.
    package var encodedEntityChunkCount = 0
    /// How many entity chunks, unchanged since the last checkpoint, were copied from it as stored (its compressed
    /// bytes, verified) instead of encoded again.
    package var copiedEntityChunkCount = 0
    /// How many index chunks were copied from the last checkpoint as stored, their entity unchanged since.
    package var copiedIndexChunkCount = 0
}

extension Store {
    /// The digest of the committed state (see ``StateDigest``): computed by the engine's one digest over the state
    /// itself, so it equals what `egctl replay --summary` computes from the log. Checkpoint chunks still on disk are
    /// read for it, each once whatever the budget of decoded chunks (``StoreState/pinningCheckpointChunks()``).
    ///
    /// - Throws: the error of the first damaged chunk (rather than count it as empty).
    func stateDigest() throws(EventGraphError) -> StateDigest {
        // An application asks for it between its work (tests, checks after a migration): a core is free for a
        // helper that hashes half the chunks.
        try state.withLock { $0 }.pinningCheckpointChunks().digest(model: model, helperThread: true)
    }

    /// Rewrites the log as the schema plus a checkpoint of the live state; `previousPath` keeps the old file.
    ///
    /// Saves go on beside it (the Concurrency article, rule 3): the queue of saves is drained only
    /// for the instant the state (an immutable version) and the log's end are taken, and again for the moment the
    /// transactions committed meanwhile are copied into the new file and it is swapped in. The checkpoint is built,
    /// written, synced and verified with no lock held. Compactions run one at a time.
    ///
    /// A close cancels it (see ``close()``): it then throws ``EventGraphError/Code/closed`` and the log is as it was.
    ///
    /// - Parameters:
    ///   - verifyingByReplay: also replay the new file from its bytes before it replaces the log and compare its
    ///     state digest with the live state's (`egctl compact`); without it the new file is verified by re-reading
    ///     every frame's checksums and the checkpoint's structure.
    func compact(keepingPreviousAt previousPath: String? = nil, verifyingByReplay: Bool = false)
        throws(EventGraphError) -> CompactionReport
    {
        guard !isReadOnly else { throw EventGraphError(.readOnly, "the store is read-only") }
        return try compactionLock.withLock { _ throws(EventGraphError) -> CompactionReport in
            guard !closing.isCancelled else { throw EventGraphError(.closed, "the store is closed") }
            // The checkpoint drops the records of saves across stores: their other participants decide first.
            let confirmed = try crossStoreParts.confirmParticipants(
                of: "store \(storeUUID)", ledger: backend.crossStoreLedger, storeUUID: storeUUID.logUUID)
            let (snapshot, anchor) = try withDrainedQueue {
                queue throws(EventGraphError) -> (StoreState, RewriteAnchor) in
                try Self.requireOpen(queue)
                // One that came before this instant would be in the checkpoint unconfirmed; later ones are in the
                // tail the new file copies, records included.
                if crossStoreParts.hasUnconfirmed(confirmed) {
                    throw EventGraphError(.conflict, "a save across stores came during the compaction; compact again")
                }
                return (state.withLock { $0 }, try backend.rewriteAnchor())
            }
            var input = try checkpointInput(of: snapshot)
            // A rewrite that fails or is cancelled leaves no digest running.
            defer { input.digest.cancel() }
            input.verifiesByReplay = verifyingByReplay
            try stoppingAtClose {
                () throws(EventGraphError) in
                let prepared = try backend.prepareRewrite(
                    schema: model.schema, checkpoint: input, from: anchor, cancellation: closing)
                try withDrainedQueue { queue throws(EventGraphError) in
                    try Self.requireOpen(queue)
                    try backend.finishRewrite(prepared, keepingPreviousAt: previousPath, cancellation: closing) {
                        handles, generation in
                        // The new file holds the blobs of the checkpoint's live objects and of the transactions
                        // copied after it: forget the others, whose old offsets would point into the new file.
                        state.withLock { state in
                            state.blobHandles = handles
                            state.blobGeneration = generation
                        }
                    }
                }
            }
            automaticCheckpoint.recordCheckpoint(at: input.begin.lastTransactionID)
            crossStoreParts.forget(confirmed)
            var report = CompactionReport(
                lastTransactionID: input.begin.lastTransactionID, objectCount: Int(input.begin.objectCount),
                blobCount: input.blobs.count, stateDigest: try input.digest.value())
            report.copiedEntityChunkCount = input.copiedEntityChunkCount
            report.copiedIndexChunkCount = input.copiedIndexChunkCount()
            report.encodedEntityChunkCount = input.entityChunks.count - input.copiedEntityChunkCount
            return report
        }
    }

    /// Runs a rewrite's step; when the store's close cancelled it, its failure says so with
    /// ``EventGraphError/Code/closed`` (the log was not rewritten).
    private func stoppingAtClose(_ body: () throws(EventGraphError) -> Void) throws(EventGraphError) {
        do { try body() } catch {
            guard closing.isCancelled, error.code != .closed else { throw error }
            throw EventGraphError(
                .closed, "the store closed during the compaction; the log was not rewritten (\(error))")
        }
    }

    /// Refuses a compaction on a closed store or one whose log failed.
    private static func requireOpen(_ queue: CommitQueue) throws(EventGraphError) {
        guard !queue.isClosed else { throw EventGraphError(.closed, "the store is closed") }
        if let failure = queue.failure { throw failure }
    }

    /// The checkpoint frames for a state (the engine's one checkpoint writer), with the bytes of every external
    /// value the live objects reference.
    func checkpointInput(of snapshot: StoreState) throws(EventGraphError) -> CheckpointInput {
        // Chunks still on disk are read now: a damaged one stops the checkpoint with its error instead of being
        // written as empty. The copy holds them decoded for the whole checkpoint (its plan, its digest), so that
        // the budget of decoded chunks does not make each pass decode them again.
        let snapshot = try snapshot.pinningCheckpointChunks()
        // The state digest (one pass over every object in key order) is computed on a thread of its own while the
        // chunks are listed, the stored indexes built and the checkpoint written: all only read the snapshot, an
        // immutable version. Only the checkpoint-end frame waits for it. (The entity chunks are encoded on every
        // core as the rewrite writes them.)
        let model = self.model
        let digest = BackgroundDigest(of: snapshot, model: model, cancellation: closing)
        let plan = snapshot.checkpointEntityChunkPlan(model: model, nextKey: keyWatermark)
        // The indexes of the entities in entity chunks are stored too, so that open rebuilds none (1.4).
        let entities = Set(plan.entityChunks.map(\.entityIndex))
        // Built on a Dispatch worker while the entity chunks are written (they come after them in the file).
        let indexChunks = LockedValue<[BuiltCheckpointIndex]>([])
        let copiedIndexChunks = LockedValue(0)
        let indexesBuilt = DispatchGroup()
        if snapshot.isIndexed {
            DispatchQueue.global().async(group: indexesBuilt) {
                // An entity that no commit changed since the last checkpoint has its indexes copied from it.
                let built = snapshot.builtCheckpointIndexes(model: model, entities: entities, copyingStored: true)
                copiedIndexChunks.withLock { $0 = built.reduce(0) { $0 + ($1.stored?.count ?? 0) } }
                indexChunks.withLock { $0 = built }
            }
        }
        let begin = plan.begin
        var entityChunks = EntityChunkSource()
        entityChunks.count = plan.entityChunks.count
        entityChunks.content = { (index, arrays) throws(LogFormatError) in
            try plan.entityChunkContent(index, model: model, arrays: arrays)
        }
        var blobs: [(reference: BlobReference, bytes: [UInt8])] = []
        do throws(EventGraphError) {
            for reference in snapshot.referencedBlobs(model: model) {
                guard let bytes = try readBlob(reference) else {
                    throw EventGraphError(
                        .log,
                        "the live state references external value \(reference.index) of transaction "
                            + "\(reference.transactionID), which the log lacks")
                }
                blobs.append((reference, bytes))
            }
        } catch {
            digest.cancel()
            throw error
        }
        var input = CheckpointInput(
            begin: begin, chunks: plan.chunks, entityChunks: entityChunks,
            indexChunks: {
                indexesBuilt.wait()
                // Handed over, not kept: the writer lets them go once written, instead of the input at the end of
                // the compaction (see `FileBackend.prepareRewrite`).
                return indexChunks.withLock { built in
                    defer { built = [] }
                    return built
                }
            }, digest: digest, blobs: blobs)
        input.copiedEntityChunkCount = plan.copiedEntityChunkCount
        input.copiedIndexChunkCount = {
            indexesBuilt.wait()
            return copiedIndexChunks.withLock { $0 }
        }
        return input
    }
}

extension ModelContainer {
    /// Compacts the store like ``compact()``, keeping the replaced file at `previousPath` (`egctl compact
    /// --keep-previous`); with `verifyingByReplay`, the new file is also replayed from its bytes and its state
    /// digest compared with the live state's before it replaces the log.
    package func compact(keepingPreviousAt previousPath: String?, verifyingByReplay: Bool = false)
        throws(EventGraphError) -> CompactionReport
    {
        try store.compact(keepingPreviousAt: previousPath, verifyingByReplay: verifyingByReplay)
    }
}
