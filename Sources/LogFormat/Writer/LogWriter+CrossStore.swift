/// What a save across several stores needs from each store's writer (`Docs/FileFormat.md`, §3.6): its frames
/// written before any store syncs, a refusal of everything after a failure in another store, and, when opening
/// decides that the save did not commit, its removal from the end of the log.
extension LogWriter {
    /// Waits until a queued transaction is written to the file (not necessarily synced): a save across stores
    /// writes every store's frames first, then syncs them all.
    ///
    /// - Throws: the write error (the writer is then poisoned).
    package func waitUntilWritten(_ transaction: AppendedTransaction) throws(LogFormatError) {
        try state.withLock { (locked: inout ConditionLock<State>.Locked) throws(LogFormatError) in
            try ensure(transaction.endByteOffset, of: transaction.fileGeneration, durable: false, &locked)
        }
    }

    /// Refuses every later append and the seal, as a failed write does: another store of a save across stores
    /// failed, so this log may hold a part of a save that did not commit, which only an opener of all the stores
    /// may decide (a seal after it would claim it committed).
    ///
    /// With `transaction`, it also tries to cut that transaction (the last one queued) off the file, as a failed
    /// write cuts its batch: the save is then in no log, not only undecided. Best effort — should the cut fail, the
    /// next opener of the stores still decides the save from what the logs hold.
    package func poison(because reason: String, discarding transaction: AppendedTransaction? = nil) {
        state.withLock { locked in
            if locked.value.poison == nil { locked.value.poison = LogFormatError(.poisoned, reason, path: path) }
            // A transaction of a file a rewrite has replaced is not at its offsets any more: it is not cut.
            if let transaction, transaction.fileGeneration == locked.value.fileGeneration,
                let box = locked.value.fileBox
            {
                // A leader may still be writing or syncing frames before it; the cut waits for it.
                locked.wait { !$0.leaderActive }
                locked.value.queued = []
                if transaction.byteOffset < locked.value.writtenEnd {
                    try? box.file.truncate(to: transaction.byteOffset)
                    locked.value.allocatedEnd = transaction.byteOffset
                    locked.value.writtenEnd = transaction.byteOffset
                    locked.value.syncedEnd = min(locked.value.syncedEnd, transaction.byteOffset)
                }
                locked.value.reservedEnd = transaction.byteOffset
                locked.value.queuedStart = transaction.byteOffset
            }
            locked.owner.broadcast()
        }
    }

    /// Removes the log's last transaction, which starts at `byteOffset`: the file is cut there and synced, and the
    /// next transaction follows `previousTransactionID` again. Opening uses it for a save across stores that did
    /// not commit (another participant lacks it); nothing may be queued.
    ///
    /// - Throws: ``LogFormatError/Code/invalidArgument`` when the transaction is not the log's last one or does not
    ///   start at `byteOffset`; an I/O error (the writer is then poisoned).
    package func discardLastTransaction(
        _ transactionID: UInt64, startingAt byteOffset: UInt64, previousTransactionID: UInt64
    ) throws(LogFormatError) {
        try state.withLock { (locked: inout ConditionLock<State>.Locked) throws(LogFormatError) in
            try checkUsable(locked.value)
            precondition(
                locked.value.queued.isEmpty && !locked.value.leaderActive, "nothing is queued while a save is undone")
            guard let box = locked.value.fileBox else {
                throw LogFormatError(.closed, "the log writer is closed", path: path)
            }
            guard locked.value.lastTransactionID == transactionID, previousTransactionID < transactionID else {
                throw LogFormatError(
                    .invalidArgument,
                    "transaction \(transactionID) is not the last one (\(locked.value.lastTransactionID))", path: path)
            }
            let header = try frameHeader(
                in: box.file, at: byteOffset, below: locked.value.reservedEnd, seed: locked.value.seed)
            guard header.transactionID == transactionID,
                header.type == .blob || header.type == .transaction
                    || header.type == .transactionFirst
            else {
                throw LogFormatError(
                    .invalidArgument, "no frame of transaction \(transactionID) starts at this offset", path: path,
                    byteOffset: byteOffset)
            }
            do throws(LogFormatError) {
                try box.file.truncate(to: byteOffset)
                try box.file.sync()
            } catch {
                locked.value.poison = error
                throw error
            }
            locked.value.reservedEnd = byteOffset
            locked.value.writtenEnd = byteOffset
            locked.value.syncedEnd = byteOffset
            locked.value.allocatedEnd = byteOffset
            locked.value.queuedStart = byteOffset
            locked.value.nextSequence = header.sequence
            locked.value.lastTransactionID = previousTransactionID
        }
    }

    /// The verified header of the frame at `byteOffset` (which must be a frame start before `end`).
    private func frameHeader(in file: borrowing LogFile, at byteOffset: UInt64, below end: UInt64, seed: UInt32)
        throws(LogFormatError) -> FrameHeader
    {
        let size = UInt64(FrameHeader.byteCount)
        guard byteOffset >= LogFileHeader.framesByteOffset, byteOffset % 8 == 0, byteOffset < end,
            end - byteOffset >= size
        else {
            throw LogFormatError(.invalidArgument, "no frame starts at this offset", path: path, byteOffset: byteOffset)
        }
        let bytes = try file.read(count: FrameHeader.byteCount, at: byteOffset)
        let decoded = bytes.withUnsafeBytes { FrameHeader.decode($0, seed: seed) }
        switch decoded {
        case .success(let header): return header
        case .failure(let failure):
            throw LogFormatError(
                .damaged, "the frame header fails: \(failure.reason)", path: path, byteOffset: byteOffset)
        }
    }
}
