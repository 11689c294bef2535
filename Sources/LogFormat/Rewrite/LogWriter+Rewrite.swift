#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a rewrite did.
public struct RewriteReport: Hashable, Sendable {
    /// Size of the log before the rewrite.
    public var oldByteCount: UInt64
    /// Size of the new log.
    public var newByteCount: UInt64
    /// The new file's generation.
    public var generation: UInt64
    /// Transactions after the checkpoint copied from the old file.
    public var copiedTransactionCount: Int
    /// Where checkpoint blobs landed in the new file, for lazy reads.
    public var checkpointBlobs: [BlobLocation]
    /// Where copied transactions' blobs landed in the new file.
    public var copiedBlobs: [BlobLocation]
    /// How long the rewrite took, verification included.
    public var durationNanoseconds: UInt64
    /// Path of the previous file kept by `keepingPreviousAt`, if any.
    public var previousPath: String?
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

    private func rewriteLocked(
        schema: SchemaPayload, begin: CheckpointBegin, end: CheckpointEnd, previousPath: String?, started: UInt64,
        caller: CallerError, writeCheckpoint: (inout CheckpointSink) throws -> Void, verify: (String) throws -> Void
    ) throws(LogFormatError) -> RewriteReport {
        return try state.withLock {
            (locked: inout ConditionLock<State>.Locked) throws(LogFormatError) -> RewriteReport in
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
            let oldStatus = try oldBox.file.status()
            let temporary = AtomicRewrite.temporaryPath(for: resolvedPath, purpose: "rewrite")
            var newLock: StoreLock?
            var copied = 0
            var checkpointBlobs: [BlobLocation] = []
            var copiedBlobs: [BlobLocation] = []
            let newEnd: UInt64
            let nextSequence: UInt64
            do throws(LogFormatError) {
                let temporaryFile = try LogFile(
                    path: temporary, flags: O_RDWR | O_CREAT | O_EXCL, faults: options.faultInjector)
                try temporaryFile.takeOwnershipAndMode(of: oldStatus)
                var frames = try SequentialFrameWriter(file: temporaryFile, header: newHeader)
                try frames.append(OutgoingFrame(type: .schema, payload: try encode { try schema.encoded() }))
                try frames.append(
                    OutgoingFrame(
                        type: .checkpointBegin, transactionID: begin.lastTransactionID,
                        payload: try encode { try begin.encoded() }))
                var sink = CheckpointSink(
                    writer: frames, transactionID: begin.lastTransactionID,
                    fragmentByteCount: options.fragmentByteCount)
                var sinkError: LogFormatError?
                do throws(LogFormatError) { try caller.run { try writeCheckpoint(&sink) } } catch { sinkError = error }
                checkpointBlobs = sink.locations
                frames = sink.writer
                if let sinkError { throw sinkError }
                try frames.append(
                    OutgoingFrame(
                        type: .checkpointEnd, transactionID: begin.lastTransactionID,
                        payload: try encode { try end.encoded() }))
                // Copy the transactions the checkpoint does not cover.
                if begin.lastTransactionID < old.lastTransactionID {
                    let reader = try LogReader(path: resolvedPath)
                    try reader.scanTyped(fromTransactionID: begin.lastTransactionID + 1) {
                        record throws(LogFormatError) in
                        guard case .transaction(let transaction) = record else { return }
                        var blobs: [[UInt8]] = []
                        for blob in transaction.blobs { blobs.append(try reader.readBlob(at: blob.byteOffset)) }
                        for (index, bytes) in blobs.enumerated() {
                            let offset = try frames.append(
                                OutgoingFrame(
                                    type: .blob, transactionID: transaction.transactionID, partIndex: UInt32(index),
                                    payload: bytes))
                            copiedBlobs.append(
                                BlobLocation(
                                    transactionID: transaction.transactionID, index: UInt32(index), byteOffset: offset,
                                    byteCount: UInt32(bytes.count)))
                        }
                        try transaction.body.forEachFrame(
                            transactionID: transaction.transactionID, fragmentByteCount: options.fragmentByteCount
                        ) { frame throws(LogFormatError) in try frames.append(frame) }
                        copied += 1
                    }
                }
                try frames.finishWithSeal()
                newEnd = frames.offset
                nextSequence = frames.sequence
                // Re-read the new file completely before it replaces anything.
                let check = try LogReader(path: temporary).scanTyped { _ in }
                guard check.tail == .clean, check.endsWithSeal, check.lastTransactionID == old.lastTransactionID,
                    check.committedByteCount == newEnd
                else {
                    throw LogFormatError(
                        .verificationFailed,
                        "the rewritten file does not verify (tail \(check.tail), last transaction "
                            + "\(check.lastTransactionID) instead of \(old.lastTransactionID)); the log was not replaced",
                        path: temporary)
                }
                try caller.run { try verify(temporary) }
                // Lock the new file before it becomes the log, so that the store is never unlocked.
                newLock = try StoreLock.lockingNewFile(at: temporary)
                if let previousPath {
                    SystemCalls.unlink(previousPath)
                    try SystemCalls.link(resolvedPath, to: previousPath)
                }
                try options.faultInjector.rename(temporary, to: resolvedPath)
            } catch {
                newLock?.release()
                SystemCalls.unlink(temporary)
                throw error
            }
            // The new file is the log now: its lock is the store's, and the old file's lock can go.
            let oldLock = locked.value.storeLock
            locked.value.storeLock = newLock!
            oldLock.release()
            // From here the new file is the log. If the directory sync fails, durability of the rename is
            // unknown: poison the writer so that the next open recovers from whatever the directory holds.
            do throws(LogFormatError) {
                try options.faultInjector.syncDirectory(of: resolvedPath)
                let file = try LogFile(path: resolvedPath, flags: O_RDWR, faults: options.faultInjector)
                locked.value.fileBox = SharedLogFile(file)
            } catch {
                locked.value.poison = error
                throw error
            }
            locked.value.header = newHeader
            locked.value.seed = newHeader.checksumSeed
            locked.value.reservedEnd = newEnd
            locked.value.writtenEnd = newEnd
            locked.value.syncedEnd = newEnd
            locked.value.queuedStart = newEnd
            locked.value.nextSequence = nextSequence
            return RewriteReport(
                oldByteCount: old.reservedEnd, newByteCount: newEnd, generation: newHeader.generation,
                copiedTransactionCount: copied, checkpointBlobs: checkpointBlobs, copiedBlobs: copiedBlobs,
                durationNanoseconds: SystemClock.monotonicNanoseconds() - started, previousPath: previousPath)
        }
    }
}
