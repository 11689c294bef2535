/// The log as a rewrite found it when it began: the transactions appended after the anchor start at its byte
/// offset, with its sequence number (see ``LogWriter/rewriteAnchor()``).
package struct RewriteAnchor: Sendable {
    /// The log's header then (its file UUID names the file; a rewrite finished since replaced it).
    let header: LogFileHeader
    /// The end of everything appended then: a boundary between committed units.
    let byteOffset: UInt64
    /// The sequence number of the next frame then.
    let sequence: UInt64
    /// The last transaction appended then.
    package let lastTransactionID: UInt64
    /// The old file's mode, owner and group, which the new file takes.
    let ownershipAndMode: FileStatus
}

/// A rewrite between its two phases: a new file under a temporary name holding the schema and a checkpoint,
/// synced and verified, while the log kept taking appends (``LogWriter/prepareRewrite(from:schema:begin:end:writeCheckpoint:verify:)``).
/// ``LogWriter/finishRewrite(_:keepingPreviousAt:)`` adds the transactions appended since and puts it in place.
///
/// Dropping it before it is in place removes the temporary file, so no half-written file outlives a rewrite that
/// failed or was abandoned (and the next open removes any that a crash left).
package final class PreparedRewrite {
    /// The temporary file's path.
    package let path: String
    var frames: SequentialFrameWriter
    let anchor: RewriteAnchor
    /// The checkpoint's last transaction: the tail holds the transactions after it.
    let checkpointTransactionID: UInt64
    let checkpointBlobs: [BlobLocation]
    /// Where the tail starts: right after the checkpoint's end frame.
    private let tailStart: LogScanner.Start
    private var copiedTransactionCount = 0
    private var copiedBlobs: [BlobLocation] = []
    private let started: UInt64
    /// Set once the file was renamed over the log (it is no longer this rewrite's to remove).
    var isInPlace = false

    init(
        path: String, frames: consuming SequentialFrameWriter, anchor: RewriteAnchor, checkpointTransactionID: UInt64,
        checkpointBlobs: [BlobLocation], started: UInt64
    ) {
        self.path = path
        self.tailStart = LogScanner.Start(
            byteOffset: frames.offset, sequence: frames.sequence, lastTransactionID: checkpointTransactionID)
        self.frames = frames
        self.anchor = anchor
        self.checkpointTransactionID = checkpointTransactionID
        self.checkpointBlobs = checkpointBlobs
        self.started = started
    }

    deinit {
        if !isInPlace { SystemCalls.unlink(path) }
    }

    /// Removes the temporary file now (a rewrite that failed); the rewrite cannot be finished afterwards.
    func discard() {
        guard !isInPlace else { return }
        SystemCalls.unlink(path)
    }

    /// Writes the schema and the checkpoint (begin, what `writeCheckpoint` appends, the directory, end); returns
    /// where the checkpoint's blobs landed.
    static func writeCheckpoint(
        schema: SchemaPayload, begin: CheckpointBegin, end: CheckpointEnd, into frames: inout SequentialFrameWriter,
        fragmentByteCount: Int, caller: CallerError, writeCheckpoint: (inout CheckpointSink) throws -> Void
    ) throws(LogFormatError) -> [BlobLocation] {
        try frames.append(OutgoingFrame(type: .schema, payload: try encode { try schema.encoded() }))
        try frames.append(
            OutgoingFrame(
                type: .checkpointBegin, transactionID: begin.lastTransactionID,
                payload: try encode { try begin.encoded() }))
        var sink = CheckpointSink(
            writer: frames, transactionID: begin.lastTransactionID, fragmentByteCount: fragmentByteCount)
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
        return checkpointBlobs
    }

    /// Re-reads the synced file completely, then lets the caller verify it (the object layer may replay it and
    /// compare its state digest).
    ///
    /// Every frame's header and body checksums, padding, sequence and the file's grammar are checked (the
    /// directory must list exactly the entity and index chunks written); the bodies of entity and index chunks are
    /// checksummed but not decompressed or decoded, the other frames are decoded as a scan does.
    func verifyCheckpoint(caller: CallerError, verify: (String) throws -> Void) throws(LogFormatError) {
        let check = try LogReader(path: path).scanTyped(defersEntityChunkBodies: true, checksumsDeferredBodies: true) {
            _ in
        }
        guard check.tail == .clean, check.lastTransactionID == checkpointTransactionID,
            check.committedByteCount == frames.offset
        else {
            throw LogFormatError(
                .verificationFailed,
                "the rewritten file does not verify (tail \(check.tail), last transaction "
                    + "\(check.lastTransactionID) instead of \(checkpointTransactionID)); the log was not replaced",
                path: path)
        }
        try caller.run { try verify(path) }
    }

    /// Copies the transactions after the checkpoint from the old log at `oldPath` (everything appended there is
    /// written), with their blobs: from the anchor on when the checkpoint holds the anchor's last transaction,
    /// else from the start of the file. `reached` is called once the first one is copied (or none is to be).
    func copyTail(
        from oldPath: String, fragmentByteCount: Int, reached: () throws(LogFormatError) -> Void
    ) throws(LogFormatError) {
        // No transaction can follow the largest ID.
        guard checkpointTransactionID < UInt64.max else { return try reached() }
        let reader = try LogReader(path: oldPath)
        let start =
            checkpointTransactionID == anchor.lastTransactionID
            ? LogScanner.Start(
                byteOffset: anchor.byteOffset, sequence: anchor.sequence, lastTransactionID: anchor.lastTransactionID)
            : nil
        var isReached = false
        try reader.scanTyped(fromTransactionID: checkpointTransactionID + 1, from: start) {
            record throws(LogFormatError) in
            guard case .transaction(let transaction) = record else { return }
            for blob in transaction.blobs.sorted(by: { $0.index < $1.index }) {
                let bytes = try reader.readBlob(at: blob.byteOffset)
                let offset = try frames.append(
                    OutgoingFrame(
                        type: .blob, transactionID: transaction.transactionID, partIndex: blob.index, payload: bytes))
                copiedBlobs.append(
                    BlobLocation(
                        transactionID: transaction.transactionID, index: blob.index, byteOffset: offset,
                        byteCount: UInt32(bytes.count)))
            }
            try transaction.body.forEachFrame(
                transactionID: transaction.transactionID, fragmentByteCount: fragmentByteCount
            ) { frame throws(LogFormatError) in try frames.append(frame) }
            copiedTransactionCount += 1
            if !isReached {
                isReached = true
                try reached()
            }
        }
        if !isReached { try reached() }
    }

    /// Seals and syncs the file, then re-reads what was added after the checkpoint (the checkpoint itself was
    /// verified when it was written): the tail must end with the seal, at `lastTransactionID`.
    func seal(lastTransactionID: UInt64) throws(LogFormatError) {
        try frames.finishWithSeal()
        let check = try LogReader(path: path).scanTyped(from: tailStart) { _ in }
        guard check.tail == .clean, check.endsWithSeal, check.lastTransactionID == lastTransactionID,
            check.committedByteCount == frames.offset
        else {
            throw LogFormatError(
                .verificationFailed,
                "the rewritten file does not verify after its checkpoint (tail \(check.tail), last transaction "
                    + "\(check.lastTransactionID) instead of \(lastTransactionID)); the log was not replaced",
                path: path,
                byteOffset: tailStart.byteOffset)
        }
    }

    /// What the rewrite did.
    func report(oldByteCount: UInt64, previousPath: String?) -> RewriteReport {
        RewriteReport(
            oldByteCount: oldByteCount, newByteCount: frames.offset, generation: frames.header.generation,
            copiedTransactionCount: copiedTransactionCount, checkpointBlobs: checkpointBlobs, copiedBlobs: copiedBlobs,
            durationNanoseconds: SystemClock.monotonicNanoseconds() - started, previousPath: previousPath)
    }
}
