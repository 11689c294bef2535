/// Where a blob frame is: its logical identity (transaction and index) and its byte offset in this file.
package struct BlobLocation: Hashable, Sendable {
    /// The transaction the blob belongs to.
    package var transactionID: UInt64
    /// The blob's index in that transaction.
    package var index: UInt32
    /// The byte offset of the blob's frame in this file.
    package var byteOffset: UInt64
    /// The value's length in bytes.
    package var byteCount: UInt32

    /// Creates a location.
    package init(transactionID: UInt64, index: UInt32, byteOffset: UInt64, byteCount: UInt32) {
        self.transactionID = transactionID
        self.index = index
        self.byteOffset = byteOffset
        self.byteCount = byteCount
    }
}

/// A committed unit found while scanning, with its payload already verified and decompressed.
enum ScanEvent {
    case schema(payload: [UInt8], byteOffset: UInt64)
    case transaction(id: UInt64, payload: SpannedPayload, blobs: [BlobLocation], byteOffset: UInt64)
    case checkpointBegin(payload: [UInt8], byteOffset: UInt64)
    case checkpointChunk(payload: SpannedPayload, byteOffset: UInt64)
    case checkpointBlob(BlobLocation)
    case checkpointEnd(payload: [UInt8], byteOffset: UInt64)
    /// The directory of a checkpoint in the chunk layout (format 1.3), already decoded and checked against the
    /// entity chunks the scan saw.
    case checkpointDirectory(CheckpointDirectory, byteOffset: UInt64)
    case dictionary(payload: [UInt8], byteOffset: UInt64)
    case seal(byteOffset: UInt64)
    case extensionFrame(type: FrameType, payload: [UInt8], byteOffset: UInt64)
}

/// How a scan ended.
struct ScanResult {
    /// End of the last committed unit: everything before it is intact.
    var committedEnd: UInt64
    /// Sequence number the next frame must carry.
    var nextSequence: UInt64
    /// The last committed transaction (0 when none).
    var lastTransactionID: UInt64
    /// Whether the last committed frame is a seal.
    var endsWithSeal: Bool
    /// Frames counted, committed transactions counted, payload bytes after decompression.
    var frameCount: Int
    var transactionCount: Int
    var rawPayloadByteCount: UInt64
    var storedBodyByteCount: UInt64
    /// What follows the committed prefix: nothing, a torn tail, or damage.
    var tail: TailState
}

/// What the scan found after the committed prefix.
enum TailState {
    case clean
    case torn(byteOffset: UInt64, byteCount: UInt64, reason: String)
    case damaged(DamageReport)
}

/// Reads frames in order, verifying each one and the grammar of the file, and classifies the first failure as a
/// torn (never-synced) tail or as damage to synced data (see `Docs/FileFormat.md`, "Recovery").
struct LogScanner: ~Copyable {
    var window: FileWindow
    let header: LogFileHeader
    let seed: UInt32
    /// Whether the bodies of checkpoint entity chunks are left for their first load (`Docs/FileFormat-Checkpoints.md`
    /// §4): their headers are checked, their bodies skipped and not delivered. Only the store's open defers;
    /// everything that checks a file reads every body.
    let defersEntityChunkBodies: Bool
    /// With ``defersEntityChunkBodies``: the deferred bodies are still read and their checksums and padding
    /// verified, but not decompressed or delivered (a rewrite's re-read of the file it wrote: every byte checked,
    /// no payload decoded).
    let checksumsDeferredBodies: Bool
    /// With ``checksumsDeferredBodies``: where the deferred bodies are checked, on other threads while the scan
    /// goes on (a rewrite's re-read, ``LogReader/verifyingScan(_:)``); nil to check each in place, in order.
    var parallelChecks: ParallelScanChecks?
    /// Whether the LZ4 bodies of transaction frames are checked (checksum, padding, dictionary) but left
    /// compressed, for the decoding of each transaction to decompress once (egctl's replay, whose decoding runs on
    /// another thread; see ``LogReader/scan(fromTransactionID:defersEntityChunkBodies:defersTransactionDecompression:_:)``).
    /// A block that does not decompress then fails its transaction's decoding instead of being classified here; and
    /// a scan that stops, or ends inside a transaction, while holding frames it did not decompress throws
    /// ``uncheckedDecompressionError(at:)`` rather than classify what a verifying scan might classify otherwise.
    let defersTransactionDecompression: Bool

    init(
        window: consuming FileWindow, header: LogFileHeader, defersEntityChunkBodies: Bool = false,
        checksumsDeferredBodies: Bool = false, defersTransactionDecompression: Bool = false
    ) {
        self.window = window
        self.header = header
        self.seed = header.checksumSeed
        self.defersEntityChunkBodies = defersEntityChunkBodies
        self.checksumsDeferredBodies = checksumsDeferredBodies
        self.defersTransactionDecompression = defersTransactionDecompression
    }

    /// A frame that passed every per-frame check.
    struct VerifiedFrame {
        var header: FrameHeader
        var byteOffset: UInt64
        var payload: [UInt8]
        /// Whether its body was left compressed (``defersTransactionDecompression``): not known to decompress.
        var decompressionDeferred = false
        /// A whole transaction's body left compressed (``payload`` is empty).
        var compressed: CompressedPayload?
    }

    /// What a scan that defers decompression throws where a verifying one would classify a failure with frames it
    /// did not decompress involved: its caller scans again, verifying (see ``defersTransactionDecompression``).
    func uncheckedDecompressionError(at byteOffset: UInt64) -> LogFormatError {
        LogFormatError(
            .damaged,
            "the scan stopped at byte offset \(byteOffset) holding transaction frames it did not decompress; "
                + "scan again with decompression to classify it",
            path: window.shared.path, byteOffset: byteOffset)
    }

    /// Why a frame was rejected.
    struct Rejection: Error {
        var reason: String
    }

    /// Reads and verifies one frame at `offset` (checksums, limits, padding, decompression).
    mutating func readFrame(
        at offset: UInt64, expectedSequence: UInt64?, dictionary: [UInt8]?
    ) throws(LogFormatError) -> Result<VerifiedFrame, Rejection> {
        let seed = self.seed
        guard
            let decoded = try window.withBytes(
                at: offset, count: FrameHeader.byteCount,
                { raw in
                    FrameHeader.decode(raw, seed: seed)
                })
        else {
            return .failure(Rejection(reason: "truncated frame header"))
        }
        let frameHeader: FrameHeader
        switch decoded {
        case .success(let value): frameHeader = value
        case .failure(let failure): return .failure(Rejection(reason: failure.reason))
        }
        if let expectedSequence, frameHeader.sequence != expectedSequence {
            return .failure(Rejection(reason: "sequence number \(frameHeader.sequence), expected \(expectedSequence)"))
        }
        // A writer records how far the file was durable *before* the frame; a frame claiming more would be proof of
        // durability for bytes written after it.
        guard frameHeader.durableWatermark <= offset else {
            return .failure(
                Rejection(reason: "durable watermark \(frameHeader.durableWatermark) is past the frame's own offset"))
        }
        let paddedCount = Int(frameHeader.frameByteCount) - FrameHeader.byteCount
        if defersEntityChunkBodies
            && (frameHeader.type == .checkpointEntityChunk || frameHeader.type == .checkpointIndexChunk)
        {
            // Only the frame's extent is checked now (it must end inside the file); its body is verified when the
            // chunk is loaded. `frameByteCount` is bounded by the header's limits, so the sum cannot overflow.
            guard offset + frameHeader.frameByteCount <= window.limit else {
                return .failure(Rejection(reason: "truncated frame body"))
            }
            if checksumsDeferredBodies, let parallelChecks {
                parallelChecks.checkBody(ofFrameAt: offset, header: frameHeader)
            } else if checksumsDeferredBodies {
                let checked = try window.withBytes(at: offset + UInt64(FrameHeader.byteCount), count: paddedCount) {
                    raw -> Rejection? in
                    FrameBody.checkStored(raw, header: frameHeader, seed: seed)
                }
                guard let checked else { return .failure(Rejection(reason: "truncated frame body")) }
                if let checked { return .failure(checked) }
            }
            return .success(VerifiedFrame(header: frameHeader, byteOffset: offset, payload: []))
        }
        if defersTransactionDecompression && frameHeader.codec != .raw && frameHeader.type.isTransactionPayload {
            let path = window.shared.path
            let checked = try window.withBytes(at: offset + UInt64(FrameHeader.byteCount), count: paddedCount) {
                raw -> Result<CompressedPayload?, Rejection> in
                if let rejection = FrameBody.checkStored(raw, header: frameHeader, seed: seed) {
                    return .failure(rejection)
                }
                if let rejection = FrameBody.checkDictionary(header: frameHeader, dictionary: dictionary) {
                    return .failure(rejection)
                }
                // A fragment's bytes are read again when its transaction is decoded (``FragmentedPayload``).
                guard frameHeader.type == .transaction else { return .success(nil) }
                return .success(
                    CompressedPayload(
                        body: Array(raw[0..<Int(frameHeader.bodyByteCount)]), header: frameHeader,
                        dictionary: dictionary, byteOffset: offset, path: path))
            }
            guard let checked else { return .failure(Rejection(reason: "truncated frame body")) }
            switch checked {
            case .success(let compressed):
                return .success(
                    VerifiedFrame(
                        header: frameHeader, byteOffset: offset, payload: [], decompressionDeferred: true,
                        compressed: compressed))
            case .failure(let rejection):
                return .failure(rejection)
            }
        }
        let bodyResult = try window.withBytes(at: offset + UInt64(FrameHeader.byteCount), count: paddedCount) {
            raw -> Result<[UInt8], Rejection> in
            FrameBody.payload(of: raw, header: frameHeader, seed: seed, dictionary: dictionary)
        }
        guard let bodyResult else { return .failure(Rejection(reason: "truncated frame body")) }
        switch bodyResult {
        case .success(let payload):
            // A fragment's bytes are read again when its transaction or checkpoint chunk is decoded
            // (``FragmentedPayload``); holding them here would keep up to a whole transaction in memory.
            let keep = !frameHeader.type.isFragment
            return .success(VerifiedFrame(header: frameHeader, byteOffset: offset, payload: keep ? payload : []))
        case .failure(let rejection):
            return .failure(rejection)
        }
    }

    /// Looks for the first frame after `offset` whose header and body checksums verify, whose sequence number is
    /// at least `sequence` and whose watermark is not past itself (decompression is not needed to prove that the
    /// frame was written).
    mutating func nextVerifiableFrame(after offset: UInt64, sequenceAtLeast sequence: UInt64)
        throws(LogFormatError) -> (header: FrameHeader, byteOffset: UInt64)?
    {
        var candidate = offset + UInt64(FrameHeader.alignment)
        let seed = self.seed
        while candidate + UInt64(FrameHeader.byteCount) <= window.limit {
            let header = try window.withBytes(at: candidate, count: FrameHeader.byteCount) { raw in
                try? FrameHeader.decode(raw, seed: seed).get()
            }
            if let header = header ?? nil, header.sequence >= sequence, header.durableWatermark <= candidate {
                let bodyCount = Int(header.bodyByteCount)
                let bodyVerifies =
                    try window.withBytes(at: candidate + UInt64(FrameHeader.byteCount), count: bodyCount) { body in
                        CRC32C.checksum(body, continuing: seed) == header.bodyChecksum
                    } ?? false
                if bodyVerifies { return (header, candidate) }
            }
            candidate += UInt64(FrameHeader.alignment)
        }
        return nil
    }
}
