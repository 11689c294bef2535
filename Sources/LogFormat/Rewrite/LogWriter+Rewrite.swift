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
    /// the next open. Appends wait while the rewrite runs. If anything fails before the rename the old log stays
    /// in use and the writer remains usable.
    ///
    /// - Parameter previousPath: when given, the old file is kept there (hard link) instead of being dropped.
    package func rewrite(
        schema: SchemaPayload, begin: CheckpointBegin, end: CheckpointEnd,
        keepingPreviousAt previousPath: String? = nil,
        writeCheckpoint: (inout CheckpointSink) throws -> Void,
        verify: (String) throws -> Void = { _ in }
    ) throws -> RewriteReport {
        let started = SystemClock.monotonicNanoseconds()
        let caller = CallerError()
        do {
            return try rewriteLocked(
                schema: schema, begin: begin, end: end, previousPath: previousPath, started: started, caller: caller,
                writeCheckpoint: writeCheckpoint, verify: verify)
        } catch {
            try caller.rethrow(error)
        }
    }

    /// The rewrite itself, under the writer's lock (appends wait): one named stage after the other.
    private func rewriteLocked(
        schema: SchemaPayload, begin: CheckpointBegin, end: CheckpointEnd, previousPath: String?, started: UInt64,
        caller: CallerError, writeCheckpoint: (inout CheckpointSink) throws -> Void, verify: (String) throws -> Void
    ) throws(LogFormatError) -> RewriteReport {
        return try state.withLock {
            (locked: inout ConditionLock<State>.Locked) throws(LogFormatError) -> RewriteReport in
            let (old, newHeader, oldStatus) = try prepareRewrite(upTo: begin, &locked)
            let temporary = AtomicRewrite.temporaryPath(for: resolvedPath, purpose: "rewrite")
            var newLock: StoreLock?
            let written: RewrittenFile
            do throws(LogFormatError) {
                written = try writeRewrittenFile(
                    at: temporary, header: newHeader, ownershipAndMode: oldStatus, schema: schema, begin: begin,
                    end: end, lastTransactionID: old.lastTransactionID, caller: caller,
                    writeCheckpoint: writeCheckpoint)
                try verifyRewrittenFile(
                    at: temporary, written, lastTransactionID: old.lastTransactionID, caller: caller, verify: verify)
                // Lock the new file before it becomes the log, so that the store is never unlocked.
                newLock = try StoreLock.lockingNewFile(at: temporary)
                try replaceLog(with: temporary, keepingPreviousAt: previousPath)
            } catch {
                newLock?.release()
                SystemCalls.unlink(temporary)
                throw error
            }
            try adoptRewrittenFile(written, header: newHeader, lock: newLock!, &locked)
            return RewriteReport(
                oldByteCount: old.reservedEnd, newByteCount: written.endByteOffset, generation: newHeader.generation,
                copiedTransactionCount: written.copiedTransactionCount, checkpointBlobs: written.checkpointBlobs,
                copiedBlobs: written.copiedBlobs, durationNanoseconds: SystemClock.monotonicNanoseconds() - started,
                previousPath: previousPath)
        }
    }

    /// What was written into the new file.
    private struct RewrittenFile {
        var endByteOffset: UInt64
        var nextSequence: UInt64
        var copiedTransactionCount = 0
        var checkpointBlobs: [BlobLocation] = []
        var copiedBlobs: [BlobLocation] = []
    }

    /// Makes everything appended so far durable and checks that a checkpoint `begin` can replace the log. Returns
    /// the writer's state, the new file's header and the old file's status (its owner and mode carry over).
    private func prepareRewrite(upTo begin: CheckpointBegin, _ locked: inout ConditionLock<State>.Locked)
        throws(LogFormatError) -> (old: State, newHeader: LogFileHeader, oldStatus: FileStatus)
    {
        try checkUsable(locked.value)
        try ensure(locked.value.reservedEnd, durable: true, &locked)
        let old = locked.value
        guard begin.lastTransactionID <= old.lastTransactionID else {
            throw LogFormatError(
                .invalidArgument,
                "a checkpoint at transaction \(begin.lastTransactionID) is ahead of the log's last transaction "
                    + "\(old.lastTransactionID)", path: path)
        }
        let newHeader = try old.header.successor(baseSequence: old.nextSequence, path: path)
        guard let oldBox = old.fileBox else {
            throw LogFormatError(.closed, "the log writer is closed", path: path)
        }
        // The new file takes the old one's mode, owner and group: a store made private, or owned by a service
        // user and compacted by root, must stay so.
        return (old, newHeader, try oldBox.file.status())
    }

    /// Writes the new file under a temporary name: the schema, the checkpoint, the transactions after it copied
    /// from the current file, and a seal.
    private func writeRewrittenFile(
        at temporary: String, header: LogFileHeader, ownershipAndMode: FileStatus, schema: SchemaPayload,
        begin: CheckpointBegin, end: CheckpointEnd, lastTransactionID: UInt64, caller: CallerError,
        writeCheckpoint: (inout CheckpointSink) throws -> Void
    ) throws(LogFormatError) -> RewrittenFile {
        let temporaryFile = try LogFile(
            path: temporary, flags: O_RDWR | O_CREAT | O_EXCL, faults: options.faultInjector)
        try temporaryFile.takeOwnershipAndMode(of: ownershipAndMode)
        var frames = try SequentialFrameWriter(file: temporaryFile, header: header)
        try frames.append(OutgoingFrame(type: .schema, payload: try encode { try schema.encoded() }))
        try frames.append(
            OutgoingFrame(
                type: .checkpointBegin, transactionID: begin.lastTransactionID,
                payload: try encode { try begin.encoded() }))
        var sink = CheckpointSink(
            writer: frames, transactionID: begin.lastTransactionID, fragmentByteCount: options.fragmentByteCount)
        var sinkError: LogFormatError?
        do throws(LogFormatError) {
            try caller.run { try writeCheckpoint(&sink) }
            try sink.finishDirectory()
        } catch {
            sinkError = error
        }
        let checkpointBlobs = sink.locations
        frames = sink.writer
        if let sinkError { throw sinkError }
        try frames.append(
            OutgoingFrame(
                type: .checkpointEnd, transactionID: begin.lastTransactionID, payload: try encode { try end.encoded() })
        )
        var written = RewrittenFile(endByteOffset: 0, nextSequence: 0, checkpointBlobs: checkpointBlobs)
        if begin.lastTransactionID < lastTransactionID {
            try copyTransactions(after: begin.lastTransactionID, into: &frames, &written)
        }
        try frames.finishWithSeal()
        written.endByteOffset = frames.offset
        written.nextSequence = frames.sequence
        return written
    }

    /// Copies the transactions the checkpoint does not cover, with their blobs, from the current file.
    private func copyTransactions(
        after transactionID: UInt64, into frames: inout SequentialFrameWriter, _ written: inout RewrittenFile
    ) throws(LogFormatError) {
        let reader = try LogReader(path: resolvedPath)
        try reader.scanTyped(fromTransactionID: transactionID + 1) { record throws(LogFormatError) in
            guard case .transaction(let transaction) = record else { return }
            var blobs: [[UInt8]] = []
            for blob in transaction.blobs { blobs.append(try reader.readBlob(at: blob.byteOffset)) }
            for (index, bytes) in blobs.enumerated() {
                let offset = try frames.append(
                    OutgoingFrame(
                        type: .blob, transactionID: transaction.transactionID, partIndex: UInt32(index),
                        payload: bytes))
                written.copiedBlobs.append(
                    BlobLocation(
                        transactionID: transaction.transactionID, index: UInt32(index), byteOffset: offset,
                        byteCount: UInt32(bytes.count)))
            }
            try transaction.body.forEachFrame(
                transactionID: transaction.transactionID, fragmentByteCount: options.fragmentByteCount
            ) { frame throws(LogFormatError) in try frames.append(frame) }
            written.copiedTransactionCount += 1
        }
    }

    /// Re-reads the new file completely before it replaces anything, then lets the caller verify it (the object
    /// layer may replay it and compare its state digest).
    ///
    /// Every frame's header and body checksums, padding, sequence and the file's grammar are checked (the
    /// directory must list exactly the entity and index chunks written); the bodies of entity and index chunks are
    /// checksummed but not decompressed or decoded, the other frames are decoded as a scan does.
    private func verifyRewrittenFile(
        at temporary: String, _ written: RewrittenFile, lastTransactionID: UInt64, caller: CallerError,
        verify: (String) throws -> Void
    ) throws(LogFormatError) {
        let check = try LogReader(path: temporary).scanTyped(
            defersEntityChunkBodies: true, checksumsDeferredBodies: true
        ) { _ in }
        guard check.tail == .clean, check.endsWithSeal, check.lastTransactionID == lastTransactionID,
            check.committedByteCount == written.endByteOffset
        else {
            throw LogFormatError(
                .verificationFailed,
                "the rewritten file does not verify (tail \(check.tail), last transaction "
                    + "\(check.lastTransactionID) instead of \(lastTransactionID)); the log was not replaced",
                path: temporary)
        }
        try caller.run { try verify(temporary) }
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
        _ written: RewrittenFile, header: LogFileHeader, lock newLock: StoreLock,
        _ locked: inout ConditionLock<State>.Locked
    ) throws(LogFormatError) {
        // The new file is the log now: its lock is the store's, and the old file's lock can go.
        let oldLock = locked.value.storeLock
        locked.value.storeLock = newLock
        oldLock.release()
        // If the directory sync fails, durability of the rename is unknown: poison the writer so that the next
        // open recovers from whatever the directory holds.
        do throws(LogFormatError) {
            try options.faultInjector.syncDirectory(of: resolvedPath)
            let file = try LogFile(path: resolvedPath, flags: O_RDWR, faults: options.faultInjector)
            locked.value.fileBox = SharedLogFile(file)
        } catch {
            locked.value.poison = error
            throw error
        }
        locked.value.header = header
        locked.value.seed = header.checksumSeed
        locked.value.reservedEnd = written.endByteOffset
        locked.value.writtenEnd = written.endByteOffset
        locked.value.syncedEnd = written.endByteOffset
        locked.value.queuedStart = written.endByteOffset
        locked.value.nextSequence = written.nextSequence
    }
}
