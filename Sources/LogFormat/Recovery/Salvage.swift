#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a salvage copied and what it could not.
package struct SalvageReport: Hashable, Sendable {
    /// A stretch of the damaged file that held nothing verifiable.
    package struct LostRegion: Hashable, Sendable {
        /// Where the region starts.
        package var byteOffset: UInt64
        /// How long it is.
        package var byteCount: UInt64
        /// Why its first frame failed.
        package var reason: String
        /// The last transaction copied before the region (0 when none).
        package var afterTransactionID: UInt64
        /// The first transaction copied after the region (nil when none was).
        package var nextTransactionID: UInt64?

        /// The transactions that were in the region, bounded by the surviving neighbours; nil when nothing after
        /// the region survived (then every transaction after ``afterTransactionID`` may be lost) or none is missing.
        package var transactionIDs: ClosedRange<UInt64>? {
            // Compared before adding: `afterTransactionID` comes from the file and may be the largest ID.
            guard let next = nextTransactionID, next > afterTransactionID, next - afterTransactionID > 1 else {
                return nil
            }
            return (afterTransactionID + 1)...(next - 1)
        }
    }

    /// Transactions copied into the new file.
    package var copiedTransactionCount: Int
    /// Schema frames copied.
    package var copiedSchemaCount: Int
    /// Whether a complete checkpoint was copied.
    package var copiedCheckpoint: Bool
    /// The last transaction copied.
    package var lastTransactionID: UInt64
    /// The regions that held nothing verifiable, in file order.
    package var lostRegions: [LostRegion]
    /// The size of the new file.
    package var outputByteCount: UInt64

    /// Whether everything verifiable was all there was (no region lost).
    package var isComplete: Bool { lostRegions.isEmpty }
}

/// Copies every verifiable unit of a damaged log into a new log.
package enum Salvage {
    /// Reads `path` (never modifying it), skipping regions that fail their checks, and writes every schema,
    /// checkpoint and transaction that verifies into a new log at `outputPath` (same store UUID, a new file UUID,
    /// the next generation), then syncs and verifies it.
    ///
    /// Transaction IDs keep their values, so the transactions lost are exactly the gaps the report lists.
    ///
    /// The new file is private (owner read and write), like every new log; a symlink as `outputPath` is followed.
    ///
    /// - Throws: when `outputPath` exists, when `path` is not a regular file or has no readable header, or on I/O
    ///   errors.
    package static func salvage(path: String, to outputPath: String) throws(LogFormatError) -> SalvageReport {
        // A symlink as the output names the file to create: the new log goes where it points.
        let resolvedOutput = try FilePath.resolvingSymbolicLinks(outputPath)
        guard try SystemCalls.status(atPath: resolvedOutput, followingLinks: false) == nil else {
            throw LogFormatError(.invalidArgument, "already exists; salvage writes a new file", path: outputPath)
        }
        let reader = try LogReader(path: path)
        let source = try LogFile(path: path, flags: O_RDONLY, faults: nil)
        let size = try source.size()
        var scanner = LogScanner(window: FileWindow(file: source, limit: size), header: reader.header)

        let temporary = AtomicRewrite.temporaryPath(for: resolvedOutput, purpose: "salvage")
        let header = try reader.header.successor(baseSequence: 1, path: path)
        let regions = LostRegions()
        var report: SalvageReport
        do throws(LogFormatError) {
            var copier = UnitCopier(
                frames: try SequentialFrameWriter(
                    file: try LogFile(path: temporary, flags: O_RDWR | O_CREAT | O_EXCL, faults: nil), header: header),
                reader: reader)
            let result = try scanner.scan(policy: .resynchronize(regions.recordSkipped)) {
                event throws(LogFormatError) in try copier.copyUnit(event, regions: regions)
            }
            regions.recordUnsyncedTail(of: result)
            try copier.frames.finishWithSeal()
            report = copier.report
            report.outputByteCount = copier.frames.offset
            try verifySalvagedFile(at: temporary, report)
            try publishSalvagedFile(temporary, at: resolvedOutput, outputPath: outputPath)
        } catch {
            SystemCalls.unlink(temporary)
            throw error
        }
        report.lostRegions = regions.list
        return report
    }

    /// The regions a salvage scan skipped, in file order. A class: the scan's failure policy records into it while
    /// the copier runs.
    private final class LostRegions {
        var list: [SalvageReport.LostRegion] = []

        /// A region the scan skipped to resynchronize on the next verifiable frame.
        func recordSkipped(_ region: LogScanner.LostRegion) {
            list.append(
                SalvageReport.LostRegion(
                    byteOffset: region.byteOffset, byteCount: region.byteCount, reason: region.reason,
                    afterTransactionID: region.afterTransactionID, nextTransactionID: nil))
        }

        /// The first transaction copied after the last region bounds it.
        func recordCopied(transactionID: UInt64) {
            if let last = list.indices.last, list[last].nextTransactionID == nil {
                list[last].nextTransactionID = transactionID
            }
        }

        /// The scan ended in a torn tail that no skipped region already covers.
        func recordUnsyncedTail(of result: ScanResult) {
            guard case .torn(let offset, let count, let reason) = result.tail, count > 0,
                list.last.map({ $0.byteOffset + $0.byteCount < offset + count }) ?? true
            else { return }
            list.append(
                SalvageReport.LostRegion(
                    byteOffset: offset, byteCount: count, reason: reason + " (unsynced tail)",
                    afterTransactionID: result.lastTransactionID, nextTransactionID: nil))
        }
    }

    /// Copies each verified unit the scan delivers into the new file.
    private struct UnitCopier: ~Copyable {
        var frames: SequentialFrameWriter
        let reader: LogReader
        var report = SalvageReport(
            copiedTransactionCount: 0, copiedSchemaCount: 0, copiedCheckpoint: false, lastTransactionID: 0,
            lostRegions: [], outputByteCount: 0)
        /// The frames of a checkpoint whose end has not been seen yet.
        var checkpointFrames: [CheckpointPart] = []

        init(frames: consuming SequentialFrameWriter, reader: LogReader) {
            self.frames = frames
            self.reader = reader
        }

        mutating func copyUnit(_ event: ScanEvent, regions: LostRegions) throws(LogFormatError) {
            switch event {
            case .schema(let payload, _):
                try frames.append(OutgoingFrame(type: .schema, payload: payload))
                report.copiedSchemaCount += 1
            case .transaction(let id, let payload, let blobs, _):
                try copyTransaction(id, payload: payload, blobs: blobs)
                regions.recordCopied(transactionID: id)
            case .checkpointBegin(let payload, _):
                // A checkpoint is copied only once its end verifies; buffer its frames until then.
                checkpointFrames = [.frame(OutgoingFrame(type: .checkpointBegin, payload: payload))]
            case .checkpointChunk(let payload, _):
                // A chunk spanning fragments stays in the file until the checkpoint is copied.
                checkpointFrames.append(.chunk(payload))
            case .checkpointBlob(let location):
                let (_, bytes) = try reader.readFrame(at: location.byteOffset)
                checkpointFrames.append(
                    .frame(
                        OutgoingFrame(
                            type: .blob, transactionID: location.transactionID, partIndex: location.index,
                            payload: bytes)))
            case .checkpointEnd(let payload, _):
                try copyCheckpoint(endingWith: payload)
            case .dictionary, .seal, .extensionFrame, .checkpointDirectory:
                // A salvage scan reads entity chunks as ordinary chunks, so the checkpoint it copies has no
                // directory to keep.
                break
            }
        }

        /// A transaction's blobs, then its changeset; a fragmented one fragment by fragment, never held whole.
        private mutating func copyTransaction(_ id: UInt64, payload: SpannedPayload, blobs: [BlobLocation])
            throws(LogFormatError)
        {
            for blob in blobs {
                let (_, bytes) = try reader.readFrame(at: blob.byteOffset)
                try frames.append(OutgoingFrame(type: .blob, transactionID: id, partIndex: blob.index, payload: bytes))
            }
            try payload.forEachFrame(transactionID: id, fragmentByteCount: 1 << 20) { frame throws(LogFormatError) in
                try frames.append(frame)
            }
            report.copiedTransactionCount += 1
            report.lastTransactionID = id
        }

        /// The buffered checkpoint, now complete, under the transaction ID its begin frame names.
        private mutating func copyCheckpoint(endingWith payload: [UInt8]) throws(LogFormatError) {
            let checkpointID = CheckpointEndProbe.lastTransactionID(ofBegin: checkpointFrames.first)
            checkpointFrames.append(.frame(OutgoingFrame(type: .checkpointEnd, payload: payload)))
            for part in checkpointFrames {
                try part.forEachFrame { (frame) throws(LogFormatError) in
                    var frame = frame
                    if frame.type != .blob { frame.transactionID = checkpointID }
                    try frames.append(frame)
                }
            }
            checkpointFrames = []
            report.copiedCheckpoint = true
            report.lastTransactionID = max(report.lastTransactionID, checkpointID)
        }
    }

    /// Re-reads the new file completely: it must verify and hold every transaction copied.
    private static func verifySalvagedFile(at temporary: String, _ report: SalvageReport) throws(LogFormatError) {
        let check = try LogReader(path: temporary).scanTyped { _ in }
        guard check.tail == .clean, check.transactionCount == report.copiedTransactionCount else {
            throw LogFormatError(
                .verificationFailed, "the salvaged file does not verify (\(check.tail))", path: temporary)
        }
    }

    /// Links the new file into place, unless something appeared there meanwhile, and syncs the directory.
    private static func publishSalvagedFile(_ temporary: String, at resolvedOutput: String, outputPath: String)
        throws(LogFormatError)
    {
        guard try FaultInjector?.none.publish(temporary, at: resolvedOutput) else {
            throw LogFormatError(
                .invalidArgument, "appeared while salvaging; salvage writes a new file", path: outputPath)
        }
        try SystemCalls.syncDirectory(of: resolvedOutput)
    }
}

/// A part of a checkpoint a salvage holds until the checkpoint's end verifies: a frame, or a chunk (which may span
/// fragments, left in the source file until it is copied).
private enum CheckpointPart {
    case frame(OutgoingFrame)
    case chunk(SpannedPayload)

    func forEachFrame(_ body: (OutgoingFrame) throws(LogFormatError) -> Void) throws(LogFormatError) {
        switch self {
        case .frame(let frame): try body(frame)
        case .chunk(let payload): try payload.forEachCheckpointChunkFrame(body)
        }
    }
}

/// Reads the transaction ID a checkpoint covers from its begin frame's payload.
private enum CheckpointEndProbe {
    static func lastTransactionID(ofBegin part: CheckpointPart?) -> UInt64 {
        guard case .frame(let frame)? = part, let begin = try? CheckpointBegin(decoding: Array(frame.payload)) else {
            return 0
        }
        return begin.lastTransactionID
    }
}
