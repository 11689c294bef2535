#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
    /// Where the old log's transactions not yet copied start (`nil`: scan it from its first frame, for a checkpoint
    /// older than the anchor), and the last transaction copied or covered by the checkpoint.
    private var copiedThrough: LogScanner.Start?
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
        self.copiedThrough =
            checkpointTransactionID == anchor.lastTransactionID
            ? LogScanner.Start(
                byteOffset: anchor.byteOffset, sequence: anchor.sequence, lastTransactionID: anchor.lastTransactionID)
            : nil
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
        schema: SchemaPayload, begin: CheckpointBegin, end: () throws -> CheckpointEnd,
        into frames: inout SequentialFrameWriter, fragmentByteCount: Int, cancellation: RewriteCancellation?,
        caller: CallerError, writeCheckpoint: (inout CheckpointSink) throws -> Void
    ) throws(LogFormatError) -> [BlobLocation] {
        try frames.append(OutgoingFrame(type: .schema, payload: try encode { try schema.encoded() }))
        try frames.append(
            OutgoingFrame(
                type: .checkpointBegin, transactionID: begin.lastTransactionID,
                payload: try encode { try begin.encoded() }))
        var sink = CheckpointSink(
            writer: frames, transactionID: begin.lastTransactionID, fragmentByteCount: fragmentByteCount)
        sink.cancellation = cancellation
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
        // Asked for last: the caller may still be computing it (the state digest, beside the chunks).
        var checkpointEnd: CheckpointEnd?
        try caller.run { checkpointEnd = try end() }
        let endPayload = try encode { try checkpointEnd!.encoded() }
        try frames.append(
            OutgoingFrame(type: .checkpointEnd, transactionID: begin.lastTransactionID, payload: endPayload))
        return checkpointBlobs
    }

    /// Re-reads the synced file completely, then lets the caller verify it (the object layer may replay it and
    /// compare its state digest).
    ///
    /// Every frame's header and body checksums, padding, sequence and the file's grammar are checked (the
    /// directory must list exactly the entity and index chunks written); the bodies of entity and index chunks are
    /// checksummed but not decompressed or decoded, the other frames are decoded as a scan does (the bodies'
    /// checksums and the checkpoint chunks' decoding on other threads beside the scan: ``LogReader/verifyingScan(_:)``).
    func verifyCheckpoint(cancellation: RewriteCancellation?, caller: CallerError, verify: (String) throws -> Void)
        throws(LogFormatError)
    {
        let check = try LogReader(path: path).verifyingScan { () throws(LogFormatError) in
            try cancellation?.check(path: path, stage: "while its new file was verified")
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

    /// Copies the transactions after the checkpoint that the old log at `oldPath` holds and were not copied yet,
    /// with their blobs; returns how many. `reached` is called once the first one is copied (or none is to be).
    ///
    /// Called with the writer's lock (the last copy, which must take everything) or without it, while appends go on
    /// (the copies before: only the committed units the scan finds complete are copied, and the next copy starts
    /// after the last of them). A transaction copied without the lock whose sync then fails poisons the writer, and
    /// a poisoned writer refuses to finish the rewrite.
    ///
    /// The scan reads no further than `finishedEnd`, the end of what the writer had written when it was asked
    /// (``LogWriter/finishedEnd()``): every byte before it is final, and a frame the writer writes meanwhile —
    /// into preallocated zeros that the file's size already counts — is never seen half-written beside a later one
    /// (which would make it look like damage to synced data). `faults` sees the scan's reads (tests).
    @discardableResult
    func copyTail(
        from oldPath: String, through finishedEnd: UInt64, fragmentByteCount: Int, faults: FaultInjector? = nil,
        reached: () throws(LogFormatError) -> Void = {}
    ) throws(LogFormatError) -> Int {
        let after = max(checkpointTransactionID, copiedThrough?.lastTransactionID ?? 0)
        // No transaction can follow the largest ID.
        guard after < UInt64.max else {
            try reached()
            return 0
        }
        let reader = try LogReader(path: oldPath)
        let scanFile = try LogFile(path: oldPath, flags: O_RDONLY, faults: faults)
        let limit = min(try scanFile.size(), finishedEnd)
        var scanner = LogScanner(window: FileWindow(file: scanFile, limit: limit), header: reader.header)
        var count = 0
        let result = try scanner.scan(from: copiedThrough) { event throws(LogFormatError) in
            guard
                case .transaction(let transaction)? = try LogReader.record(
                    for: event, path: oldPath, fromTransactionID: after + 1)
            else { return }
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
            count += 1
            if count == 1 { try reached() }
        }
        if count == 0 { try reached() }
        if case .damaged(let damage) = result.tail {
            throw LogFormatError(
                .damaged, "\(damage.summary); the log was not rewritten", path: oldPath, byteOffset: damage.byteOffset)
        }
        copiedThrough = LogScanner.Start(
            byteOffset: result.committedEnd, sequence: result.nextSequence,
            lastTransactionID: max(after, result.lastTransactionID))
        return count
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
            oldByteCount: oldByteCount, newByteCount: frames.offset, checkpointEndByteOffset: tailStart.byteOffset,
            generation: frames.header.generation,
            copiedTransactionCount: copiedTransactionCount, checkpointBlobs: checkpointBlobs, copiedBlobs: copiedBlobs,
            durationNanoseconds: SystemClock.monotonicNanoseconds() - started, previousPath: previousPath)
    }
}
