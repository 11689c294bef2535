/// The grammar of the frame sequence (`Docs/FileFormat.md`, §1 "Grammar" and §3.4): which frame may follow which,
/// and what each committed unit delivers. One stage per kind of unit.
extension LogScanner {
    /// Checks one verified frame against the grammar and delivers what it commits. Returns a rejection reason.
    func apply(
        _ frame: VerifiedFrame, _ pending: inout Pending, _ dictionary: inout [UInt8]?, _ result: inout ScanResult,
        _ deliver: (ScanEvent) throws(LogFormatError) -> Void
    ) throws(LogFormatError) -> String? {
        switch frame.header.type {
        case .blob, .transaction, .transactionFirst, .transactionMiddle, .transactionLast:
            if case .checkpoint(_, _, nil, let layout) = pending, frame.header.type == .blob {
                guard !layout.hasDirectory else { return "a checkpoint blob after the checkpoint directory" }
                return try applyCheckpointBlob(frame, pending, result, deliver)
            }
            return try applyTransactionFrame(frame, &pending, dictionary, &result, deliver)
        case .checkpointBegin, .checkpointChunk, .checkpointEnd:
            return try applyCheckpointFrame(frame, &pending, &result, deliver)
        case .checkpointChunkFirst, .checkpointChunkMiddle, .checkpointChunkLast:
            return try applyChunkFragment(frame, &pending, dictionary, deliver)
        case .checkpointEntityChunk, .checkpointDirectory, .checkpointIndexChunk:
            return try applyEntityChunkLayout(frame, &pending, deliver)
        case .schema, .dictionary, .seal:
            return try applySingleFrameUnit(frame, &pending, &dictionary, &result, deliver)
        default:
            return try applyExtensionFrame(frame, &pending, &result, deliver)
        }
    }

    /// Records that the unit `frame` ends is committed: everything before its end is intact.
    private func markCommitted(
        _ frame: VerifiedFrame, endsWithSeal: Bool = false, _ pending: inout Pending, _ result: inout ScanResult
    ) {
        pending = .none
        result.committedEnd = frame.byteOffset + frame.header.frameByteCount
        result.endsWithSeal = endsWithSeal
    }

    // MARK: - Transactions

    /// A frame of a transaction: one of its blobs, the whole transaction, or one of its fragments.
    private func applyTransactionFrame(
        _ frame: VerifiedFrame, _ pending: inout Pending, _ dictionary: [UInt8]?, _ result: inout ScanResult,
        _ deliver: (ScanEvent) throws(LogFormatError) -> Void
    ) throws(LogFormatError) -> String? {
        let h = frame.header
        guard h.transactionID > result.lastTransactionID else {
            return "transaction \(h.transactionID) does not follow transaction \(result.lastTransactionID)"
        }
        var unit = OpenTransaction(id: h.transactionID, byteOffset: frame.byteOffset, blobs: [], fragments: nil)
        switch pending {
        case .none:
            break
        case .transaction(let open) where open.id == h.transactionID:
            unit = open
        default:
            return "\(h.type) frame of transaction \(h.transactionID) interrupts another unit"
        }
        switch h.type {
        case .blob:
            return appendBlob(frame, to: unit, &pending)
        case .transaction:
            return try deliverWholeTransaction(frame, unit, &pending, &result, deliver)
        case .transactionFirst:
            return beginFragments(frame, of: unit, &pending)
        default:  // middle or last
            return try continueFragments(frame, of: unit, &pending, dictionary, &result, deliver)
        }
    }

    /// A blob frame of the transaction being assembled; blobs precede its changeset.
    private func appendBlob(_ frame: VerifiedFrame, to unit: OpenTransaction, _ pending: inout Pending) -> String? {
        var unit = unit
        guard unit.fragments == nil, frame.header.partIndex == UInt32(unit.blobs.count) else {
            return "blob \(frame.header.partIndex) of transaction \(unit.id) is out of order"
        }
        unit.blobs.append(blobLocation(frame))
        pending = .transaction(unit)
        return nil
    }

    /// A transaction in one frame: delivered and committed.
    private func deliverWholeTransaction(
        _ frame: VerifiedFrame, _ unit: OpenTransaction, _ pending: inout Pending, _ result: inout ScanResult,
        _ deliver: (ScanEvent) throws(LogFormatError) -> Void
    ) throws(LogFormatError) -> String? {
        guard unit.fragments == nil, frame.header.partIndex == 0 else {
            return "whole transaction \(unit.id) inside fragments"
        }
        // The file header records the largest transaction its writer accepts; checked before the transaction is
        // delivered, and before anything of it is decoded.
        let limit = header.transactionByteLimit
        // A body left compressed decompresses, if at all, to exactly its recorded raw length.
        let byteCount = frame.decompressionDeferred ? Int(frame.header.rawByteCount) : frame.payload.count
        guard byteCount <= limit else {
            return "transaction \(unit.id) has \(byteCount) bytes, more than the file's limit of \(limit)"
        }
        let payload: SpannedPayload = frame.compressed.map { .compressed($0) } ?? .whole(frame.payload)
        try deliverTransaction(frame, unit, payload: payload, &pending, &result, deliver)
        return nil
    }

    /// The first fragment of a large transaction: its run begins.
    private func beginFragments(_ frame: VerifiedFrame, of unit: OpenTransaction, _ pending: inout Pending) -> String? {
        let h = frame.header
        guard unit.fragments == nil, h.partIndex == 0 else { return "first fragment of \(unit.id) out of order" }
        // Fragments are verified but not kept (``VerifiedFrame``): count their raw length.
        let limit = header.transactionByteLimit
        guard Int(h.rawByteCount) <= limit else {
            return "transaction \(unit.id) has more than the file's limit of \(limit) bytes"
        }
        var unit = unit
        unit.fragments = FragmentRun(
            byteOffset: frame.byteOffset, sequence: h.sequence, count: 1, byteCount: Int(h.rawByteCount))
        pending = .transaction(unit)
        return nil
    }

    /// A middle fragment extends the run; the last one commits the transaction, delivered as a payload that reads
    /// its fragments again on demand.
    private func continueFragments(
        _ frame: VerifiedFrame, of unit: OpenTransaction, _ pending: inout Pending, _ dictionary: [UInt8]?,
        _ result: inout ScanResult, _ deliver: (ScanEvent) throws(LogFormatError) -> Void
    ) throws(LogFormatError) -> String? {
        let h = frame.header
        guard var run = unit.fragments, h.partIndex == UInt32(run.count) else {
            return "fragment \(h.partIndex) of transaction \(unit.id) is out of order"
        }
        // Both terms are at most the limit (1 GiB), so the sum cannot overflow.
        run.byteCount += Int(h.rawByteCount)
        run.count += 1
        let limit = header.transactionByteLimit
        guard run.byteCount <= limit else {
            return "transaction \(unit.id) has more than the file's limit of \(limit) bytes"
        }
        var unit = unit
        unit.fragments = run
        guard h.type == .transactionLast else {
            pending = .transaction(unit)
            return nil
        }
        let payload = FragmentedPayload(
            kind: .transaction, file: window.shared, seed: seed, dictionary: dictionary, transactionID: unit.id,
            firstByteOffset: run.byteOffset, firstSequence: run.sequence, fragmentCount: run.count,
            byteCount: run.byteCount)
        try deliverTransaction(frame, unit, payload: .fragmented(payload), &pending, &result, deliver)
        return nil
    }

    /// Delivers a complete transaction and commits it.
    private func deliverTransaction(
        _ frame: VerifiedFrame, _ unit: OpenTransaction, payload: SpannedPayload, _ pending: inout Pending,
        _ result: inout ScanResult, _ deliver: (ScanEvent) throws(LogFormatError) -> Void
    ) throws(LogFormatError) {
        try deliver(.transaction(id: unit.id, payload: payload, blobs: unit.blobs, byteOffset: unit.byteOffset))
        result.lastTransactionID = unit.id
        result.transactionCount += 1
        markCommitted(frame, &pending, &result)
    }

    // MARK: - Checkpoints

    /// A blob inside a checkpoint: a value that a live object of the checkpoint still references.
    private func applyCheckpointBlob(
        _ frame: VerifiedFrame, _ pending: Pending, _ result: ScanResult,
        _ deliver: (ScanEvent) throws(LogFormatError) -> Void
    ) throws(LogFormatError) -> String? {
        let id = frame.header.transactionID
        guard id <= result.lastTransactionID || id <= checkpointID(pending) else {
            return "checkpoint blob of transaction \(id) is newer than the checkpoint"
        }
        try deliver(.checkpointBlob(blobLocation(frame)))
        return nil
    }

    /// A checkpoint's begin, chunk or end frame; the end commits the checkpoint.
    private func applyCheckpointFrame(
        _ frame: VerifiedFrame, _ pending: inout Pending, _ result: inout ScanResult,
        _ deliver: (ScanEvent) throws(LogFormatError) -> Void
    ) throws(LogFormatError) -> String? {
        let h = frame.header
        switch h.type {
        case .checkpointBegin:
            guard case .none = pending else { return "checkpoint begins inside another unit" }
            pending = .checkpoint(
                byteOffset: frame.byteOffset, lastTransactionID: h.transactionID, chunk: nil,
                layout: EntityChunkLayout())
            try deliver(.checkpointBegin(payload: frame.payload, byteOffset: frame.byteOffset))
        case .checkpointChunk:
            guard case .checkpoint(_, _, nil, let layout) = pending else {
                return "checkpoint chunk outside a checkpoint"
            }
            guard !layout.hasDirectory else { return "a checkpoint chunk after the checkpoint directory" }
            try deliver(.checkpointChunk(payload: .whole(frame.payload), byteOffset: frame.byteOffset))
        default:  // end
            guard case .checkpoint(_, let lastID, nil, let layout) = pending, lastID == h.transactionID else {
                return "checkpoint end without a matching begin"
            }
            guard layout.byteOffsets.isEmpty || layout.hasDirectory else {
                return "checkpoint end without the directory its \(layout.byteOffsets.count) entity chunk(s) need"
            }
            guard lastID >= result.lastTransactionID else {
                return "checkpoint of transaction \(lastID) is older than transaction \(result.lastTransactionID)"
            }
            try deliver(.checkpointEnd(payload: frame.payload, byteOffset: frame.byteOffset))
            result.lastTransactionID = lastID
            markCommitted(frame, &pending, &result)
        }
        return nil
    }

    /// Checks one fragment of a checkpoint chunk that spans several frames (format 1.2) against the grammar, and
    /// delivers the chunk at its last fragment. The fragments are bounded like a transaction's: their raw lengths
    /// added up are at most the file's transaction limit, checked at every fragment before anything is decoded.
    private func applyChunkFragment(
        _ frame: VerifiedFrame, _ pending: inout Pending, _ dictionary: [UInt8]?,
        _ deliver: (ScanEvent) throws(LogFormatError) -> Void
    ) throws(LogFormatError) -> String? {
        let h = frame.header
        guard case .checkpoint(let start, let lastID, let chunk, let layout) = pending else {
            return "\(h.type) frame outside a checkpoint"
        }
        guard !layout.hasDirectory else { return "\(h.type) frame after the checkpoint directory" }
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
            pending = .checkpoint(byteOffset: start, lastTransactionID: lastID, chunk: run, layout: layout)
            return nil
        }
        let payload = FragmentedPayload(
            kind: .checkpointChunk, file: window.shared, seed: seed, dictionary: dictionary, transactionID: lastID,
            firstByteOffset: run.byteOffset, firstSequence: run.sequence, fragmentCount: run.count,
            byteCount: run.byteCount)
        pending = .checkpoint(byteOffset: start, lastTransactionID: lastID, chunk: nil, layout: layout)
        try deliver(.checkpointChunk(payload: .fragmented(payload), byteOffset: run.byteOffset))
        return nil
    }

    // MARK: - Other units

    /// A schema, dictionary or seal frame: a unit of its own, outside any transaction or checkpoint.
    private func applySingleFrameUnit(
        _ frame: VerifiedFrame, _ pending: inout Pending, _ dictionary: inout [UInt8]?, _ result: inout ScanResult,
        _ deliver: (ScanEvent) throws(LogFormatError) -> Void
    ) throws(LogFormatError) -> String? {
        let type = frame.header.type
        guard case .none = pending else { return "\(type) frame inside a transaction or checkpoint" }
        if type == .schema {
            try deliver(.schema(payload: frame.payload, byteOffset: frame.byteOffset))
        } else if type == .dictionary {
            guard frame.payload.count <= LogLimits.maxDictionaryByteCount else {
                return "dictionary of \(frame.payload.count) bytes exceeds the limit"
            }
            dictionary = frame.payload
            try deliver(.dictionary(payload: frame.payload, byteOffset: frame.byteOffset))
        } else {
            try deliver(.seal(byteOffset: frame.byteOffset))
        }
        markCommitted(frame, endsWithSeal: type == .seal, &pending, &result)
        return nil
    }

    /// A frame of a type this version does not know: skipped when its type says it may be, otherwise an error
    /// (the file needs a newer EventGraph).
    private func applyExtensionFrame(
        _ frame: VerifiedFrame, _ pending: inout Pending, _ result: inout ScanResult,
        _ deliver: (ScanEvent) throws(LogFormatError) -> Void
    ) throws(LogFormatError) -> String? {
        let type = frame.header.type
        guard type.isSkippable else {
            throw LogFormatError(
                .unsupportedFeature,
                "contains a frame of unknown type 0x\(String(type.rawValue, radix: 16)) written by a newer "
                    + "version of EventGraph — upgrade EventGraph to read it",
                path: window.path, byteOffset: frame.byteOffset)
        }
        guard case .none = pending else { return "extension frame inside a transaction or checkpoint" }
        try deliver(.extensionFrame(type: type, payload: frame.payload, byteOffset: frame.byteOffset))
        markCommitted(frame, &pending, &result)
        return nil
    }

    private func checkpointID(_ pending: Pending) -> UInt64 {
        if case .checkpoint(_, let id, _, _) = pending { return id }
        return 0
    }

    private func blobLocation(_ frame: VerifiedFrame) -> BlobLocation {
        BlobLocation(
            transactionID: frame.header.transactionID, index: frame.header.partIndex, byteOffset: frame.byteOffset,
            byteCount: frame.header.rawByteCount)
    }
}
