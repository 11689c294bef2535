extension LogScanner {
    /// The unit being assembled from several frames.
    private enum Pending {
        case none
        case transaction(id: UInt64, byteOffset: UInt64, blobs: [BlobLocation], fragments: FragmentRun?)
        /// `chunk`: the fragments of a checkpoint chunk that spans several frames, while they are being read.
        case checkpoint(byteOffset: UInt64, lastTransactionID: UInt64, chunk: FragmentRun?)
    }

    /// The fragments of a transaction or checkpoint chunk seen so far: where they start and how much they hold — not
    /// their bytes.
    private struct FragmentRun {
        var byteOffset: UInt64
        var sequence: UInt64
        var count: Int
        var byteCount: Int
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

    /// Scans every frame from the start, delivering committed units in order.
    mutating func scan(
        policy: FailurePolicy = .stop, _ deliver: (ScanEvent) throws(LogFormatError) -> Void
    ) throws(LogFormatError) -> ScanResult {
        var offset = LogFileHeader.framesByteOffset
        var expectedSequence: UInt64? = header.baseSequence
        var result = ScanResult(
            committedEnd: offset, nextSequence: header.baseSequence, lastTransactionID: 0, endsWithSeal: false,
            frameCount: 0, transactionCount: 0, rawPayloadByteCount: 0, storedBodyByteCount: 0, tail: .clean)
        var pending = Pending.none
        var dictionary: [UInt8]?
        let limit = window.limit

        while offset < limit {
            let outcome = try readFrame(at: offset, expectedSequence: expectedSequence, dictionary: dictionary)
            var rejection: String?
            switch outcome {
            case .failure(let failure):
                rejection = failure.reason
            case .success(let frame):
                rejection = try apply(frame, &pending, &dictionary, &result, deliver)
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
            result.tail = .torn(
                byteOffset: start, byteCount: limit - start,
                reason: "the last transaction or checkpoint is incomplete at the end of the file")
            result.committedEnd = start
        }
        return result
    }

    private func pendingStart(_ pending: Pending) -> UInt64? {
        switch pending {
        case .none: nil
        case .transaction(_, let byteOffset, _, _): byteOffset
        case .checkpoint(let byteOffset, _, _): byteOffset
        }
    }

    /// Checks one verified frame against the grammar and delivers what it commits. Returns a rejection reason.
    private func apply(
        _ frame: VerifiedFrame, _ pending: inout Pending, _ dictionary: inout [UInt8]?, _ result: inout ScanResult,
        _ deliver: (ScanEvent) throws(LogFormatError) -> Void
    ) throws(LogFormatError) -> String? {
        let h = frame.header
        let end = frame.byteOffset + h.frameByteCount
        func commit(endsWithSeal: Bool = false) {
            pending = .none
            result.committedEnd = end
            result.endsWithSeal = endsWithSeal
        }
        switch h.type {
        case .blob, .transaction, .transactionFirst, .transactionMiddle, .transactionLast:
            if case .checkpoint(_, _, nil) = pending, h.type == .blob {
                guard h.transactionID <= result.lastTransactionID || h.transactionID <= checkpointID(pending) else {
                    return "checkpoint blob of transaction \(h.transactionID) is newer than the checkpoint"
                }
                try deliver(.checkpointBlob(blobLocation(frame)))
                return nil
            }
            guard h.transactionID > result.lastTransactionID else {
                return "transaction \(h.transactionID) does not follow transaction \(result.lastTransactionID)"
            }
            var (id, start, blobs, fragments) = (h.transactionID, frame.byteOffset, [BlobLocation](), FragmentRun?.none)
            switch pending {
            case .none:
                break
            case .transaction(let pid, let pstart, let pblobs, let pfragments) where pid == h.transactionID:
                (id, start, blobs, fragments) = (pid, pstart, pblobs, pfragments)
            default:
                return "\(h.type) frame of transaction \(h.transactionID) interrupts another unit"
            }
            // The file header records the largest transaction its writer accepts; checked before the transaction
            // is delivered, and before anything of it is decoded.
            let limit = header.transactionByteLimit
            switch h.type {
            case .blob:
                guard fragments == nil, h.partIndex == UInt32(blobs.count) else {
                    return "blob \(h.partIndex) of transaction \(id) is out of order"
                }
                blobs.append(blobLocation(frame))
                pending = .transaction(id: id, byteOffset: start, blobs: blobs, fragments: nil)
            case .transaction:
                guard fragments == nil, h.partIndex == 0 else { return "whole transaction \(id) inside fragments" }
                guard frame.payload.count <= limit else {
                    return "transaction \(id) has \(frame.payload.count) bytes, more than the file's limit of \(limit)"
                }
                try deliver(.transaction(id: id, payload: .whole(frame.payload), blobs: blobs, byteOffset: start))
                result.lastTransactionID = id
                result.transactionCount += 1
                commit()
            case .transactionFirst:
                guard fragments == nil, h.partIndex == 0 else { return "first fragment of \(id) out of order" }
                // Fragments are verified but not kept (``VerifiedFrame``): count their raw length.
                guard Int(h.rawByteCount) <= limit else {
                    return "transaction \(id) has more than the file's limit of \(limit) bytes"
                }
                pending = .transaction(
                    id: id, byteOffset: start, blobs: blobs,
                    fragments: FragmentRun(
                        byteOffset: frame.byteOffset, sequence: h.sequence, count: 1, byteCount: Int(h.rawByteCount)))
            default:  // middle or last
                guard var run = fragments, h.partIndex == UInt32(run.count) else {
                    return "fragment \(h.partIndex) of transaction \(id) is out of order"
                }
                // Both terms are at most the limit (1 GiB), so the sum cannot overflow.
                run.byteCount += Int(h.rawByteCount)
                run.count += 1
                guard run.byteCount <= limit else {
                    return "transaction \(id) has more than the file's limit of \(limit) bytes"
                }
                if h.type == .transactionMiddle {
                    pending = .transaction(id: id, byteOffset: start, blobs: blobs, fragments: run)
                } else {
                    let payload = FragmentedPayload(
                        kind: .transaction, file: window.shared, seed: seed, dictionary: dictionary, transactionID: id,
                        firstByteOffset: run.byteOffset, firstSequence: run.sequence, fragmentCount: run.count,
                        byteCount: run.byteCount)
                    try deliver(.transaction(id: id, payload: .fragmented(payload), blobs: blobs, byteOffset: start))
                    result.lastTransactionID = id
                    result.transactionCount += 1
                    commit()
                }
            }
        case .checkpointBegin:
            guard case .none = pending else { return "checkpoint begins inside another unit" }
            pending = .checkpoint(byteOffset: frame.byteOffset, lastTransactionID: h.transactionID, chunk: nil)
            try deliver(.checkpointBegin(payload: frame.payload, byteOffset: frame.byteOffset))
        case .checkpointChunk:
            guard case .checkpoint(_, _, nil) = pending else { return "checkpoint chunk outside a checkpoint" }
            try deliver(.checkpointChunk(payload: .whole(frame.payload), byteOffset: frame.byteOffset))
        case .checkpointChunkFirst, .checkpointChunkMiddle, .checkpointChunkLast:
            return try applyChunkFragment(frame, &pending, dictionary: dictionary, deliver)
        case .checkpointEnd:
            guard case .checkpoint(_, let lastID, nil) = pending, lastID == h.transactionID else {
                return "checkpoint end without a matching begin"
            }
            guard lastID >= result.lastTransactionID else {
                return "checkpoint of transaction \(lastID) is older than transaction \(result.lastTransactionID)"
            }
            try deliver(.checkpointEnd(payload: frame.payload, byteOffset: frame.byteOffset))
            result.lastTransactionID = lastID
            commit()
        case .schema, .dictionary, .seal:
            guard case .none = pending else { return "\(h.type) frame inside a transaction or checkpoint" }
            if h.type == .schema {
                try deliver(.schema(payload: frame.payload, byteOffset: frame.byteOffset))
            } else if h.type == .dictionary {
                guard frame.payload.count <= LogLimits.maxDictionaryByteCount else {
                    return "dictionary of \(frame.payload.count) bytes exceeds the limit"
                }
                dictionary = frame.payload
                try deliver(.dictionary(payload: frame.payload, byteOffset: frame.byteOffset))
            } else {
                try deliver(.seal(byteOffset: frame.byteOffset))
            }
            commit(endsWithSeal: h.type == .seal)
        default:
            guard h.type.isSkippable else {
                throw LogFormatError(
                    .unsupportedFeature,
                    "contains a frame of unknown type 0x\(String(h.type.rawValue, radix: 16)) written by a newer "
                        + "version of EventGraph — upgrade EventGraph to read it",
                    path: window.path, byteOffset: frame.byteOffset)
            }
            guard case .none = pending else { return "extension frame inside a transaction or checkpoint" }
            try deliver(.extensionFrame(type: h.type, payload: frame.payload, byteOffset: frame.byteOffset))
            commit()
        }
        return nil
    }

    /// Checks one fragment of a checkpoint chunk that spans several frames (format 1.2) against the grammar, and
    /// delivers the chunk at its last fragment. The fragments are bounded like a transaction's: their raw lengths
    /// added up are at most the file's transaction limit, checked at every fragment before anything is decoded.
    private func applyChunkFragment(
        _ frame: VerifiedFrame, _ pending: inout Pending, dictionary: [UInt8]?,
        _ deliver: (ScanEvent) throws(LogFormatError) -> Void
    ) throws(LogFormatError) -> String? {
        let h = frame.header
        guard case .checkpoint(let start, let lastID, let chunk) = pending else {
            return "\(h.type) frame outside a checkpoint"
        }
        // The fragments carry the checkpoint's transaction ID, like its begin and end frames.
        guard h.transactionID == lastID else {
            return "\(h.type) frame names transaction \(h.transactionID), not the checkpoint's \(lastID)"
        }
        var run: FragmentRun
        if h.type == .checkpointChunkFirst {
            guard chunk == nil, h.partIndex == 0 else { return "first fragment of a checkpoint chunk out of order" }
            run = FragmentRun(byteOffset: frame.byteOffset, sequence: h.sequence, count: 0, byteCount: 0)
        } else {
            guard let current = chunk, h.partIndex == UInt32(current.count) else {
                return "fragment \(h.partIndex) of a checkpoint chunk is out of order"
            }
            run = current
        }
        // Both terms are at most the limit (1 GiB), so the sum cannot overflow.
        run.byteCount += Int(h.rawByteCount)
        run.count += 1
        let limit = header.transactionByteLimit
        guard run.byteCount <= limit else {
            return "a checkpoint chunk has more than the file's limit of \(limit) bytes"
        }
        guard h.type == .checkpointChunkLast else {
            pending = .checkpoint(byteOffset: start, lastTransactionID: lastID, chunk: run)
            return nil
        }
        let payload = FragmentedPayload(
            kind: .checkpointChunk, file: window.shared, seed: seed, dictionary: dictionary, transactionID: lastID,
            firstByteOffset: run.byteOffset, firstSequence: run.sequence, fragmentCount: run.count,
            byteCount: run.byteCount)
        pending = .checkpoint(byteOffset: start, lastTransactionID: lastID, chunk: nil)
        try deliver(.checkpointChunk(payload: .fragmented(payload), byteOffset: run.byteOffset))
        return nil
    }

    private func checkpointID(_ pending: Pending) -> UInt64 {
        if case .checkpoint(_, let id, _) = pending { return id }
        return 0
    }

    private func blobLocation(_ frame: VerifiedFrame) -> BlobLocation {
        BlobLocation(
            transactionID: frame.header.transactionID, index: frame.header.partIndex, byteOffset: frame.byteOffset,
            byteCount: frame.header.rawByteCount)
    }
}
