#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A new log written frame by frame beside the one a ``LogWriter`` holds, to replace it (migration).
///
/// Unlike ``LogWriter/rewrite(schema:begin:end:keepingPreviousAt:writeCheckpoint:verify:)``, which copies the old
/// transactions as they are, the caller supplies every frame: the schema, transactions (with the IDs the old log
/// gave them, possibly with gaps never), checkpoints and blobs. The file is a temporary one next to the log (so an
/// interrupted build is a leftover the next open removes) with the old header's store UUID and the next generation;
/// nothing changes for the old log until ``LogWriter/replace(with:keepingPreviousAt:)`` renames it into place.
package struct ReplacementLog: ~Copyable {
    /// The temporary file's path.
    package let path: String
    private var frames: SequentialFrameWriter
    private let fragmentByteCount: Int
    private var lastTransactionID: UInt64 = 0

    init(path: String, frames: consuming SequentialFrameWriter, fragmentByteCount: Int) {
        self.path = path
        self.frames = frames
        self.fragmentByteCount = fragmentByteCount
    }

    /// Appends a schema frame; returns its payload (so a caller can account for what it wrote).
    @discardableResult
    package mutating func append(schema: SchemaPayload) throws(LogFormatError) -> [UInt8] {
        let payload = try encode { try schema.encoded() }
        try frames.append(OutgoingFrame(type: .schema, payload: payload))
        return payload
    }

    /// Appends a transaction: its blob frames, then its changeset (in fragments when large).
    package mutating func appendTransaction(id: UInt64, payload: [UInt8], blobs: [[UInt8]]) throws(LogFormatError) {
        guard id > lastTransactionID else {
            throw LogFormatError(
                .invalidArgument, "transaction \(id) does not follow transaction \(lastTransactionID)", path: path)
        }
        guard payload.count <= frames.header.transactionByteLimit else {
            throw LogFormatError(
                .limitExceeded,
                "transaction \(id) is \(payload.count) bytes, over the log's limit of \(frames.header.transactionByteLimit)",
                path: path)
        }
        lastTransactionID = id
        for (index, blob) in blobs.enumerated() {
            try frames.append(OutgoingFrame(type: .blob, transactionID: id, partIndex: UInt32(index), payload: blob))
        }
        for frame in OutgoingFrame.transactionFrames(id: id, payload: payload, fragmentByteCount: fragmentByteCount) {
            try frames.append(frame)
        }
    }

    /// Appends the beginning of a checkpoint; chunks, the blobs live objects reference, and the end follow.
    /// Returns the payload written.
    @discardableResult
    package mutating func beginCheckpoint(_ begin: CheckpointBegin) throws(LogFormatError) -> [UInt8] {
        lastTransactionID = max(lastTransactionID, begin.lastTransactionID)
        let payload = try encode { try begin.encoded() }
        try frames.append(
            OutgoingFrame(type: .checkpointBegin, transactionID: begin.lastTransactionID, payload: payload))
        return payload
    }

    /// Appends a batch of the checkpoint's live objects; returns the payload written.
    @discardableResult
    package mutating func appendCheckpointChunk(_ chunk: CheckpointChunk) throws(LogFormatError) -> [UInt8] {
        let payload = try encode { try chunk.encoded() }
        try frames.append(OutgoingFrame(type: .checkpointChunk, payload: payload))
        return payload
    }

    /// Appends the bytes of an externally stored value the checkpoint's objects reference.
    package mutating func appendCheckpointBlob(_ reference: BlobReference, bytes: [UInt8]) throws(LogFormatError) {
        try frames.append(
            OutgoingFrame(
                type: .blob, transactionID: reference.transactionID, partIndex: reference.index, payload: bytes))
    }

    /// Appends the end of the checkpoint begun at `lastTransactionID`; returns the payload written.
    @discardableResult
    package mutating func endCheckpoint(_ end: CheckpointEnd, lastTransactionID: UInt64) throws(LogFormatError)
        -> [UInt8]
    {
        let payload = try encode { try end.encoded() }
        try frames.append(OutgoingFrame(type: .checkpointEnd, transactionID: lastTransactionID, payload: payload))
        return payload
    }

    /// Seals and syncs the file; it is complete and can be verified, then put in place.
    package mutating func finish() throws(LogFormatError) {
        try frames.finishWithSeal()
    }

    /// Removes the temporary file (a build that failed or was refused).
    package func discard() {
        SystemCalls.unlink(path)
    }
}

extension LogWriter {
    /// Starts a log that will replace this one: a temporary file beside it with the same store UUID, the next
    /// generation, and the old file's mode, owner and group.
    package func beginReplacement() throws(LogFormatError) -> ReplacementLog {
        let (header, nextSequence, status) = try state.withLock {
            (locked: inout ConditionLock<State>.Locked) throws(LogFormatError) in
            try checkUsable(locked.value)
            guard let box = locked.value.fileBox else {
                throw LogFormatError(.closed, "the log writer is closed", path: path)
            }
            return (locked.value.header, locked.value.nextSequence, try box.file.status())
        }
        let newHeader = try header.successor(baseSequence: nextSequence, path: path)
        let temporary = AtomicRewrite.temporaryPath(for: resolvedPath, purpose: "rewrite")
        do throws(LogFormatError) {
            let file = try LogFile(path: temporary, flags: O_RDWR | O_CREAT | O_EXCL, faults: options.faultInjector)
            try file.takeOwnershipAndMode(of: status)
            let frames = try SequentialFrameWriter(file: file, header: newHeader)
            return ReplacementLog(path: temporary, frames: frames, fragmentByteCount: options.fragmentByteCount)
        } catch {
            SystemCalls.unlink(temporary)
            throw error
        }
    }

    /// Puts a finished replacement (or any complete log file nobody else uses, such as a backup being restored) in
    /// place of this log: the file is locked, the old log is kept at `previousPath` (a hard link) when given, the
    /// file is renamed over the log and the directory synced. Closes this writer; the store is opened again from
    /// the new file.
    ///
    /// A crash before the rename leaves the old log in place (the temporary file is a leftover the next open
    /// removes); after it, the new one. A failure before the rename leaves everything as it was.
    package func replace(with newPath: String, keepingPreviousAt previousPath: String?) throws(LogFormatError) {
        let newLock = try StoreLock.lockingNewFile(at: newPath)
        defer { newLock.release() }
        try state.withLock { (locked: inout ConditionLock<State>.Locked) throws(LogFormatError) in
            try checkUsable(locked.value)
            try ensure(locked.value.reservedEnd, of: locked.value.fileGeneration, durable: true, &locked)
            if let previousPath {
                SystemCalls.unlink(previousPath)
                try SystemCalls.link(resolvedPath, to: previousPath)
            }
            do throws(LogFormatError) {
                try options.faultInjector.rename(newPath, to: resolvedPath)
            } catch {
                if let previousPath { SystemCalls.unlink(previousPath) }
                throw error
            }
            // From here the new file is the log: nothing more may be written through this writer (its file is the
            // old one), and a failed directory sync leaves the rename's durability to the next open.
            locked.value.poison = LogFormatError(.closed, "the log was replaced by a migration", path: path)
            try options.faultInjector.syncDirectory(of: resolvedPath)
        }
        try? close()
    }
}
