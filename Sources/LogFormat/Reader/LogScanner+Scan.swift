extension LogScanner {
    /// The unit being assembled from several frames.
    private enum Pending {
        case none
        case transaction(id: UInt64, byteOffset: UInt64, blobs: [BlobLocation], fragments: [[UInt8]]?, byteCount: Int)
        case checkpoint(byteOffset: UInt64, lastTransactionID: UInt64)
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
                    result.rawPayloadByteCount += UInt64(frame.payload.count)
                    result.storedBodyByteCount += UInt64(frame.header.bodyByteCount)
                    if case .none = pending { result.nextSequence = frame.header.sequence + 1 }
                }
            }
            guard let reason = rejection else { continue }

            let lastGoodSequence = (expectedSequence ?? 1) - 1
            let proof = try nextVerifiableFrame(after: offset, sequenceAbove: lastGoodSequence)
            switch policy {
            case .stop:
                // Any later frame whose watermark passes `offset` proves the failed frame was synced. The first
                // verifiable frame may have been written in the same batch (fragments, blobs, a group commit) and
                // carry an older watermark, so keep looking until one proves it or none is left.
                var witness = proof
                while let candidate = witness, candidate.header.durableWatermark <= offset {
                    witness = try nextVerifiableFrame(
                        after: candidate.byteOffset, sequenceAbove: candidate.header.sequence)
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
        case .transaction(_, let byteOffset, _, _, _): byteOffset
        case .checkpoint(let byteOffset, _): byteOffset
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
            if case .checkpoint = pending, h.type == .blob {
                guard h.transactionID <= result.lastTransactionID || h.transactionID <= checkpointID(pending) else {
                    return "checkpoint blob of transaction \(h.transactionID) is newer than the checkpoint"
                }
                try deliver(.checkpointBlob(blobLocation(frame)))
                return nil
            }
            guard h.transactionID > result.lastTransactionID else {
                return "transaction \(h.transactionID) does not follow transaction \(result.lastTransactionID)"
            }
            var (id, start, blobs, fragments, byteCount) = (
                h.transactionID, frame.byteOffset, [BlobLocation](), [[UInt8]]?.none, 0
            )
            switch pending {
            case .none:
                break
            case .transaction(let pid, let pstart, let pblobs, let pfragments, let pcount) where pid == h.transactionID:
                (id, start, blobs, fragments, byteCount) = (pid, pstart, pblobs, pfragments, pcount)
            default:
                return "\(h.type) frame of transaction \(h.transactionID) interrupts another unit"
            }
            switch h.type {
            case .blob:
                guard fragments == nil, h.partIndex == UInt32(blobs.count) else {
                    return "blob \(h.partIndex) of transaction \(id) is out of order"
                }
                blobs.append(blobLocation(frame))
                pending = .transaction(id: id, byteOffset: start, blobs: blobs, fragments: nil, byteCount: 0)
            case .transaction:
                guard fragments == nil, h.partIndex == 0 else { return "whole transaction \(id) inside fragments" }
                try deliver(.transaction(id: id, payload: frame.payload, blobs: blobs, byteOffset: start))
                result.lastTransactionID = id
                result.transactionCount += 1
                commit()
            case .transactionFirst:
                guard fragments == nil, h.partIndex == 0 else { return "first fragment of \(id) out of order" }
                pending = .transaction(
                    id: id, byteOffset: start, blobs: blobs, fragments: [frame.payload], byteCount: frame.payload.count)
            default:  // middle or last
                guard var parts = fragments, h.partIndex == UInt32(parts.count) else {
                    return "fragment \(h.partIndex) of transaction \(id) is out of order"
                }
                byteCount += frame.payload.count
                guard byteCount <= LogLimits.maxTransactionByteCount else {
                    return "transaction \(id) exceeds \(LogLimits.maxTransactionByteCount) bytes"
                }
                parts.append(frame.payload)
                if h.type == .transactionMiddle {
                    pending = .transaction(
                        id: id, byteOffset: start, blobs: blobs, fragments: parts, byteCount: byteCount)
                } else {
                    var joined: [UInt8] = []
                    joined.reserveCapacity(byteCount)
                    for part in parts { joined.append(contentsOf: part) }
                    try deliver(.transaction(id: id, payload: joined, blobs: blobs, byteOffset: start))
                    result.lastTransactionID = id
                    result.transactionCount += 1
                    commit()
                }
            }
        case .checkpointBegin:
            guard case .none = pending else { return "checkpoint begins inside another unit" }
            pending = .checkpoint(byteOffset: frame.byteOffset, lastTransactionID: h.transactionID)
            try deliver(.checkpointBegin(payload: frame.payload, byteOffset: frame.byteOffset))
        case .checkpointChunk:
            guard case .checkpoint = pending else { return "checkpoint chunk outside a checkpoint" }
            try deliver(.checkpointChunk(payload: frame.payload, byteOffset: frame.byteOffset))
        case .checkpointEnd:
            guard case .checkpoint(_, let lastID) = pending, lastID == h.transactionID else {
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

    private func checkpointID(_ pending: Pending) -> UInt64 {
        if case .checkpoint(_, let id) = pending { return id }
        return 0
    }

    private func blobLocation(_ frame: VerifiedFrame) -> BlobLocation {
        BlobLocation(
            transactionID: frame.header.transactionID, index: frame.header.partIndex, byteOffset: frame.byteOffset,
            byteCount: frame.header.rawByteCount)
    }
}
