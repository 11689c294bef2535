extension LogScanner {
    /// The unit being assembled from several frames.
    enum Pending {
        case none
        case transaction(OpenTransaction)
        /// `chunk`: the fragments of a checkpoint chunk that spans several frames, while they are being read;
        /// `layout`: the entity chunks seen so far and whether the directory came (format 1.3).
        case checkpoint(byteOffset: UInt64, lastTransactionID: UInt64, chunk: FragmentRun?, layout: EntityChunkLayout)
    }

    /// A transaction whose blobs or first fragments have been read, but not yet its last frame.
    struct OpenTransaction {
        var id: UInt64
        var byteOffset: UInt64
        var blobs: [BlobLocation]
        var fragments: FragmentRun?
    }

    /// The fragments of a transaction or checkpoint chunk seen so far: where they start and how much they hold — not
    /// their bytes.
    struct FragmentRun {
        var byteOffset: UInt64
        var sequence: UInt64
        var count: Int
        var byteCount: Int
    }

    /// A checkpoint's entity chunks (format 1.3) seen so far: their frames' offsets, which its directory must list
    /// exactly, and whether the directory has come (nothing but the end may follow it).
    struct EntityChunkLayout {
        var byteOffsets: [UInt64] = []
        /// The offsets of its index chunks (format 1.4), which the directory must list exactly too.
        var indexByteOffsets: [UInt64] = []
        var hasDirectory = false
    }

    /// What to do at the first frame that fails.
    enum FailurePolicy {
        /// Stop and classify the failure (open, read-only open, verify).
        case stop
        /// Report the lost region, skip to the next frame that verifies, and go on (salvage).
        case resynchronize((LostRegion) -> Void)
    }

    /// A region a salvage scan had to skip.
    struct LostRegion {
        var byteOffset: UInt64
        var byteCount: UInt64
        var reason: String
        var afterTransactionID: UInt64
    }

    /// Where a scan starts when not at the first frame: a frame boundary between committed units (no transaction
    /// or checkpoint open, no dictionary in force), the sequence its frame carries, and the last transaction
    /// committed before it. A rewrite resumes there to copy (or re-read) only the transactions after a point.
    struct Start {
        var byteOffset: UInt64
        var sequence: UInt64
        var lastTransactionID: UInt64
    }

    /// Scans every frame from the start (or from `start`), delivering committed units in order.
    mutating func scan(
        from start: Start? = nil, policy: FailurePolicy = .stop,
        _ deliver: (ScanEvent) throws(LogFormatError) -> Void
    ) throws(LogFormatError) -> ScanResult {
        var offset = start?.byteOffset ?? LogFileHeader.framesByteOffset
        var expectedSequence: UInt64? = start?.sequence ?? header.baseSequence
        var result = ScanResult(
            committedEnd: offset, nextSequence: expectedSequence!, lastTransactionID: start?.lastTransactionID ?? 0,
            endsWithSeal: false, frameCount: 0, transactionCount: 0, rawPayloadByteCount: 0, storedBodyByteCount: 0,
            tail: .clean)
        var pending = Pending.none
        var dictionary: [UInt8]?
        let limit = window.limit
        // The frame re-read once before it could be called damage (see below); nil while none was.
        var rereadOffset: UInt64?

        while offset < limit {
            let outcome = try readFrame(at: offset, expectedSequence: expectedSequence, dictionary: dictionary)
            var rejection: String?
            var failedFrameChecks = false
            switch outcome {
            case .failure(let failure):
                rejection = failure.reason
                failedFrameChecks = true
            case .success(let frame):
                rejection = try apply(frame, &pending, &dictionary, &result, deliver)
                // A frame left compressed that the grammar refuses: a verifying scan might have refused it first
                // for its LZ4 block, with another reason and re-read rule.
                if rejection != nil && frame.decompressionDeferred { throw uncheckedDecompressionError(at: offset) }
                if rejection == nil {
                    offset += frame.header.frameByteCount
                    expectedSequence = frame.header.sequence + 1
                    result.frameCount += 1
                    result.rawPayloadByteCount += UInt64(frame.header.rawByteCount)
                    result.storedBodyByteCount += UInt64(frame.header.bodyByteCount)
                    if case .none = pending { result.nextSequence = frame.header.sequence + 1 }
                }
            }
            guard let reason = rejection else { continue }
            // The fragments of the open transaction were not decompressed: one of them may be where a verifying
            // scan stops.
            if holdsDeferredFragments(pending) { throw uncheckedDecompressionError(at: offset) }

            // Both sequence numbers come from the file: compare, never subtract (`baseSequence` may be 0 in a
            // crafted header copy that another check rejects, and a frame may carry the largest value).
            let proof = try nextVerifiableFrame(after: offset, sequenceAtLeast: expectedSequence ?? 0)
            switch policy {
            case .stop:
                // Any later frame whose watermark passes `offset` proves the failed frame was synced. The first
                // verifiable frame may have been written in the same batch (fragments, blobs, a group commit) and
                // carry an older watermark, so keep looking until one proves it or none is left.
                var witness = proof
                while let candidate = witness, candidate.header.durableWatermark <= offset {
                    // `sequence + 1` cannot overflow: the header decoder rejects the largest sequence number.
                    witness = try nextVerifiableFrame(
                        after: candidate.byteOffset, sequenceAtLeast: candidate.header.sequence + 1)
                }
                if let proof, witness != nil {
                    // A writer may be appending while this scan reads (another process's read-only open or verify;
                    // preallocated zeros put its unfinished frames inside the window). One `pread` may have copied
                    // the failed frame's bytes before the writer wrote them and the witness's after: re-read it.
                    // The witness was written after the failed frame's bytes were written and synced (its
                    // watermark passes them), so the re-read sees them final; only a frame that fails again is
                    // damage (`Docs/FileFormat.md` §4, "Scanning a live log").
                    if failedFrameChecks && rereadOffset != offset {
                        rereadOffset = offset
                        window.discardBuffer()
                        continue
                    }
                    result.tail = .damaged(
                        DamageReport(
                            byteOffset: offset, reason: reason, lastGoodTransactionID: result.lastTransactionID,
                            nextGoodTransactionID: proof.header.transactionID == 0 ? nil : proof.header.transactionID,
                            nextGoodByteOffset: proof.byteOffset))
                } else {
                    result.tail = .torn(
                        byteOffset: result.committedEnd, byteCount: limit - result.committedEnd, reason: reason)
                }
                return result
            case .resynchronize(let report):
                let lostStart = min(offset, pendingStart(pending) ?? offset)
                let resume = proof?.byteOffset ?? limit
                report(
                    LostRegion(
                        byteOffset: lostStart, byteCount: resume - lostStart, reason: reason,
                        afterTransactionID: result.lastTransactionID))
                pending = .none
                guard let proof else {
                    result.tail = .torn(byteOffset: lostStart, byteCount: limit - lostStart, reason: reason)
                    return result
                }
                offset = proof.byteOffset
                expectedSequence = proof.header.sequence
            }
        }
        if let start = pendingStart(pending) {
            if holdsDeferredFragments(pending) { throw uncheckedDecompressionError(at: start) }
            result.tail = .torn(
                byteOffset: start, byteCount: limit - start,
                reason: "the last transaction or checkpoint is incomplete at the end of the file")
            result.committedEnd = start
        }
        return result
    }

    /// Whether the open transaction has fragments whose decompression this scan deferred.
    private func holdsDeferredFragments(_ pending: Pending) -> Bool {
        guard defersTransactionDecompression, case .transaction(let open) = pending else { return false }
        return open.fragments != nil
    }

    private func pendingStart(_ pending: Pending) -> UInt64? {
        switch pending {
        case .none: nil
        case .transaction(let open): open.byteOffset
        case .checkpoint(let byteOffset, _, _, _): byteOffset
        }
    }
}
