#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a rewrite did.
package struct RewriteReport: Hashable, Sendable {
    /// Size of the log before the rewrite.
    package var oldByteCount: UInt64
    /// Size of the new log.
    package var newByteCount: UInt64
    /// Where the new log's checkpoint ends (right after its end frame): the tail copied after it starts here.
    package var checkpointEndByteOffset: UInt64
    /// The new file's generation.
    package var generation: UInt64
    /// Transactions after the checkpoint copied from the old file.
    package var copiedTransactionCount: Int
    /// Where checkpoint blobs landed in the new file, for lazy reads.
    package var checkpointBlobs: [BlobLocation]
    /// Where copied transactions' blobs landed in the new file.
    package var copiedBlobs: [BlobLocation]
    /// How long the rewrite took, verification included.
    package var durationNanoseconds: UInt64
    /// Path of the previous file kept by `keepingPreviousAt`, if any.
    package var previousPath: String?
}

extension LogWriter {
    /// Atomically replaces the log with: the schema, a checkpoint (written by `writeCheckpoint` into the sink), the
    /// transactions after `begin.lastTransactionID` copied from the current file, and a seal.
    ///
    /// The new file is written under a temporary name, synced, **re-read and verified** (every frame, then
    /// `verify(temporaryPath)` — the object layer compares its state digest), renamed over the log, and the
    /// directory is synced. A crash at any point leaves the old or the new file complete; leftovers are removed by
    /// the next open. Appends continue while the checkpoint is written and verified
    /// (``prepareRewrite(from:schema:begin:end:writeCheckpoint:verify:)``); they wait only while the transactions
    /// appended meanwhile are copied and the file is swapped (``finishRewrite(_:keepingPreviousAt:)``). If anything
    /// fails before the rename the old log stays in use and the writer remains usable.
    ///
    /// - Parameter previousPath: when given, the old file is kept there (hard link) instead of being dropped.
    package func rewrite(
        schema: SchemaPayload, begin: CheckpointBegin, end: CheckpointEnd,
        keepingPreviousAt previousPath: String? = nil,
        writeCheckpoint: (inout CheckpointSink) throws -> Void,
        verify: (String) throws -> Void = { _ in }
    ) throws -> RewriteReport {
        let prepared = try prepareRewrite(
            from: try rewriteAnchor(), schema: schema, begin: begin, end: end, writeCheckpoint: writeCheckpoint,
            verify: verify)
        return try finishRewrite(prepared, keepingPreviousAt: previousPath)
    }

    /// Where a rewrite starts: the log as it is now (its header, its end, its last transaction). The caller takes
    /// it at the moment its checkpoint's state is taken, so that the transactions appended after the checkpoint's
    /// last one start at the anchor's byte offset.
    package func rewriteAnchor() throws(LogFormatError) -> RewriteAnchor {
        let anchor = try state.withLock {
            (locked: inout ConditionLock<State>.Locked) throws(LogFormatError) -> RewriteAnchor in
            try checkUsable(locked.value)
            guard let box = locked.value.fileBox else {
                throw LogFormatError(.closed, "the log writer is closed", path: path)
            }
            return RewriteAnchor(
                header: locked.value.header, byteOffset: locked.value.reservedEnd,
                sequence: locked.value.nextSequence, lastTransactionID: locked.value.lastTransactionID,
                ownershipAndMode: try box.file.status())
        }
        try options.faultInjector?.reach(.anchored)
        return anchor
    }

    /// The end of what the writer has written to its file (its last batch's end): every byte before it is final
    /// until the file is replaced, while bytes after it — preallocated zeros, or a batch being written — may change.
    /// A scan of the log beside the writer stops here (``PreparedRewrite/copyTail(from:through:fragmentByteCount:faults:reached:)``).
    ///
    /// A poisoned or closed writer still answers (what it wrote stays final): the rewrite fails where it did before,
    /// at its finish, or at a cancellation point.
    package func finishedEnd() -> UInt64 {
        state.withLock { $0.value.writtenEnd }
    }

    /// How many times the first phase of a rewrite copies the transactions appended since its anchor (each round
    /// copies those appended during the one before).
    static let unlockedTailCopyRounds = 3

    /// The first phase of a rewrite, with no lock held (appends continue): writes the schema and the checkpoint
    /// into a new file under a temporary name, syncs it, and re-reads and verifies it (every frame's checksums and
    /// the file's grammar, then `verify(temporaryPath)`); then copies the transactions appended meanwhile (a few
    /// rounds, see ``LogWriter/unlockedTailCopyRounds``). The file is not in place until
    /// ``finishRewrite(_:keepingPreviousAt:)``; dropping the result removes it.
    ///
    /// - Parameter anchor: the log when the checkpoint's state was taken (``rewriteAnchor()``); the checkpoint's
    ///   last transaction is at most the anchor's.
    package func prepareRewrite(
        from anchor: RewriteAnchor, schema: SchemaPayload, begin: CheckpointBegin, end: CheckpointEnd,
        writeCheckpoint: (inout CheckpointSink) throws -> Void, verify: (String) throws -> Void = { _ in }
    ) throws -> PreparedRewrite {
        try prepareRewrite(
            from: anchor, schema: schema, begin: begin, end: { end }, writeCheckpoint: writeCheckpoint, verify: verify)
    }

    /// ``prepareRewrite(from:schema:begin:end:writeCheckpoint:verify:)`` with the checkpoint-end's payload asked
    /// for only once every frame before it is written (`end` is called once, on the rewriting thread): a caller
    /// that computes the end's state digest beside the rewrite lets the two overlap. `cancellation` stops the
    /// rewrite between its stages and between chunks (see ``RewriteCancellation``).
    package func prepareRewrite(
        from anchor: RewriteAnchor, schema: SchemaPayload, begin: CheckpointBegin, end: () throws -> CheckpointEnd,
        cancellation: RewriteCancellation? = nil, writeCheckpoint: (inout CheckpointSink) throws -> Void,
        verify: (String) throws -> Void = { _ in }
    ) throws -> PreparedRewrite {
        let started = SystemClock.monotonicNanoseconds()
        let caller = CallerError()
        do {
            return try prepareRewriteTyped(
                from: anchor, schema: schema, begin: begin, end: end, cancellation: cancellation, started: started,
                caller: caller, writeCheckpoint: writeCheckpoint, verify: verify)
        } catch {
            try caller.rethrow(error)
        }
    }

    private func prepareRewriteTyped(
        from anchor: RewriteAnchor, schema: SchemaPayload, begin: CheckpointBegin, end: () throws -> CheckpointEnd,
        cancellation: RewriteCancellation?, started: UInt64, caller: CallerError,
        writeCheckpoint: (inout CheckpointSink) throws -> Void, verify: (String) throws -> Void
    ) throws(LogFormatError) -> PreparedRewrite {
        try cancellation?.check(path: path, stage: "before it began")
        guard begin.lastTransactionID <= anchor.lastTransactionID else {
            throw LogFormatError(
                .invalidArgument,
                "a checkpoint at transaction \(begin.lastTransactionID) is ahead of the log's last transaction "
                    + "\(anchor.lastTransactionID)", path: path)
        }
        let header = try anchor.header.successor(baseSequence: anchor.sequence, path: path)
        let temporary = AtomicRewrite.temporaryPath(for: resolvedPath, purpose: "rewrite")
        let temporaryFile = try LogFile(
            path: temporary, flags: O_RDWR | O_CREAT | O_EXCL, faults: options.faultInjector)
        do throws(LogFormatError) {
            try temporaryFile.takeOwnershipAndMode(of: anchor.ownershipAndMode)
            var frames = try SequentialFrameWriter(file: temporaryFile, header: header)
            let checkpointBlobs = try PreparedRewrite.writeCheckpoint(
                schema: schema, begin: begin, end: end, into: &frames, fragmentByteCount: options.fragmentByteCount,
                cancellation: cancellation, caller: caller, writeCheckpoint: writeCheckpoint)
            try frames.flush()
            try frames.file.sync()
            try cancellation?.check(path: path, stage: "after its checkpoint was written")
            let prepared = PreparedRewrite(
                path: temporary, frames: frames, anchor: anchor, checkpointTransactionID: begin.lastTransactionID,
                checkpointBlobs: checkpointBlobs, started: started)
            try prepared.verifyCheckpoint(cancellation: cancellation, caller: caller, verify: verify)
            try options.faultInjector?.reach(.checkpointWritten)
            // The transactions appended meanwhile are copied now, still without the lock, a few rounds while each
            // finds many, so that the finish (appends held) copies only the last few.
            for _ in 0..<Self.unlockedTailCopyRounds {
                try cancellation?.check(path: path, stage: "while the transactions saved beside it were copied")
                // Taken before the scan opens the file: everything before it is written and final.
                let finishedEnd = finishedEnd()
                guard
                    try prepared.copyTail(
                        from: resolvedPath, through: finishedEnd, fragmentByteCount: options.fragmentByteCount,
                        faults: options.faultInjector) > 64
                else { break }
            }
            return prepared
        } catch {
            SystemCalls.unlink(temporary)
            throw error
        }
    }

    /// The second phase of a rewrite, under the writer's lock (appends wait): copies into the prepared file the
    /// transactions appended since its anchor (with their blobs), seals and syncs it, re-reads what was added,
    /// renames the file over the log (keeping the old one at `previousPath` when given), syncs the directory, and
    /// continues appending at the new file's end.
    ///
    /// - Throws: ``LogFormatError/Code/invalidArgument`` when the log is no longer the file the anchor was taken
    ///   from (another rewrite came first; prepare again). On any failure before the rename, the old log stays in
    ///   use and the writer remains usable; the prepared file is removed.
    ///
    /// - Parameter cancellation: stops the rewrite before the tail is copied, before the seal and before the rename
    ///   (see ``RewriteCancellation``); once the file is renamed, nothing is cancelled.
    package func finishRewrite(
        _ prepared: PreparedRewrite, keepingPreviousAt previousPath: String? = nil,
        cancellation: RewriteCancellation? = nil
    ) throws(LogFormatError) -> RewriteReport {
        try state.withLock { (locked: inout ConditionLock<State>.Locked) throws(LogFormatError) -> RewriteReport in
            var newLock: StoreLock?
            let oldByteCount: UInt64
            do throws(LogFormatError) {
                try cancellation?.check(path: path, stage: "before the transactions saved beside it were copied")
                try checkUsable(locked.value)
                try ensure(locked.value.reservedEnd, of: locked.value.fileGeneration, durable: true, &locked)
                let old = locked.value
                let anchor = prepared.anchor
                guard old.header.fileUUID == anchor.header.fileUUID, old.reservedEnd >= anchor.byteOffset,
                    old.lastTransactionID >= anchor.lastTransactionID
                else {
                    throw LogFormatError(
                        .invalidArgument,
                        "the log is no longer the file this rewrite began from (generation \(anchor.header.generation)"
                            + ", \(anchor.byteOffset) bytes); rewrite it again", path: path)
                }
                oldByteCount = old.reservedEnd
                // Everything reserved is written and synced (`ensure` above), and appends wait for the lock.
                try prepared.copyTail(
                    from: resolvedPath, through: locked.value.writtenEnd, fragmentByteCount: options.fragmentByteCount,
                    faults: options.faultInjector
                ) { () throws(LogFormatError) in try options.faultInjector?.reach(.copyingTail) }
                try cancellation?.check(path: path, stage: "before the new file was sealed")
                try prepared.seal(lastTransactionID: old.lastTransactionID)
                try options.faultInjector?.reach(.tailCopied)
                try cancellation?.check(path: path, stage: "before the new file was renamed over the log")
                // Lock the new file before it becomes the log, so that the store is never unlocked.
                newLock = try StoreLock.lockingNewFile(at: prepared.path)
                try replaceLog(with: prepared.path, keepingPreviousAt: previousPath)
            } catch {
                newLock?.release()
                prepared.discard()
                throw error
            }
            prepared.isInPlace = true
            try adoptRewrittenFile(prepared, lock: newLock!, &locked)
            return prepared.report(oldByteCount: oldByteCount, previousPath: previousPath)
        }
    }

    /// Renames the verified file over the log, first keeping the old file at `previousPath` when asked.
    private func replaceLog(with temporary: String, keepingPreviousAt previousPath: String?) throws(LogFormatError) {
        if let previousPath {
            SystemCalls.unlink(previousPath)
            try SystemCalls.link(resolvedPath, to: previousPath)
        }
        try options.faultInjector.rename(temporary, to: resolvedPath)
    }

    /// Makes the renamed file the writer's log: its lock becomes the store's, the directory is synced, and appends
    /// continue at its end.
    private func adoptRewrittenFile(
        _ prepared: PreparedRewrite, lock newLock: StoreLock, _ locked: inout ConditionLock<State>.Locked
    ) throws(LogFormatError) {
        // The new file is the log now: its lock is the store's, and the old file's lock can go.
        let oldLock = locked.value.storeLock
        locked.value.storeLock = newLock
        oldLock.release()
        // If the directory sync fails, durability of the rename is unknown: poison the writer so that the next
        // open recovers from whatever the directory holds.
        do throws(LogFormatError) {
            try options.faultInjector?.reach(.renamed)
            try options.faultInjector.syncDirectory(of: resolvedPath)
            let file = try LogFile(path: resolvedPath, flags: O_RDWR, faults: options.faultInjector)
            locked.value.fileBox = SharedLogFile(file)
        } catch {
            locked.value.poison = error
            throw error
        }
        let header = prepared.frames.header
        let end = prepared.frames.offset
        locked.value.header = header
        locked.value.seed = header.checksumSeed
        locked.value.reservedEnd = end
        locked.value.writtenEnd = end
        locked.value.syncedEnd = end
        locked.value.allocatedEnd = end
        locked.value.queuedStart = end
        locked.value.nextSequence = prepared.frames.sequence
        locked.value.fileGeneration += 1
    }
}
