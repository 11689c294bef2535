#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Read-only access to a log: never modifies the file, takes no lock, and may run while another process writes.
///
/// An invalid tail is treated as "not yet written"; damage to synced data stops a scan at the damage and is
/// reported in ``ScanReport/tail`` (the read-only open "up to the damage").
public final class LogReader: Sendable {
    /// The file's path.
    public let path: String
    /// The file header.
    package let header: LogFileHeader
    /// Whether one header copy was damaged (the other was used).
    public let headerCopyDamaged: Bool
    private let file: LogFile

    /// Opens `path` read-only and checks its header.
    ///
    /// - Throws: ``LogFormatError`` when the file is missing, is not a regular file (a directory, a FIFO, a device:
    ///   refused without waiting on a FIFO), is not a log, or was written by a
    ///   newer major version or with an unknown incompatible feature.
    public convenience init(path: String) throws(LogFormatError) {
        try self.init(path: path, faults: nil)
    }

    /// Opens `path` read-only as ``init(path:)`` does, with every read of the descriptor it keeps (frames read by
    /// offset: checkpoint chunks, blobs) passing through `faults` (tests of failing reads).
    package init(path: String, faults: FaultInjector?) throws(LogFormatError) {
        self.path = path
        let file = try LogFile(path: path, flags: O_RDONLY, faults: faults)
        (header, headerCopyDamaged) = try Self.readHeader(file)
        self.file = file
    }

    /// Reads and decodes the header region of an open file.
    static func readHeader(_ file: borrowing LogFile) throws(LogFormatError) -> (LogFileHeader, Bool) {
        let region = try file.read(count: Int(LogFileHeader.framesByteOffset), at: 0)
        guard region.count >= LogFileHeader.copyByteCount else {
            if region.isEmpty { throw LogFormatError(.notALog, "is empty, not an EventGraph log", path: file.path) }
            throw LogFormatError(
                .notALog, "is too short (\(region.count) bytes) to be an EventGraph log",
                path: file.path)
        }
        let path = file.path
        let decoded = try region.withUnsafeBytes { raw in
            Result { () throws(LogFormatError) in try LogFileHeader.decode(region: raw, path: path) }
        }.get()
        guard region.count == Int(LogFileHeader.framesByteOffset) else {
            throw LogFormatError(
                .damaged, "the header region is truncated (\(region.count) of \(LogFileHeader.framesByteOffset) bytes)",
                path: file.path, byteOffset: UInt64(region.count))
        }
        // The gaps between and after the copies are zero; a flipped bit there is reported, never ignored.
        let gapsAreZero = region.withUnsafeBytes { raw in
            raw[LogFileHeader.copyByteCount..<LogFileHeader.secondCopyByteOffset].allSatisfy { $0 == 0 }
                && raw[(LogFileHeader.secondCopyByteOffset + LogFileHeader.copyByteCount)...].allSatisfy { $0 == 0 }
        }
        return (decoded.0, decoded.1 || !gapsAreZero)
    }

    /// Scans the whole log, verifying every frame, and calls `body` with each committed transaction in order.
    ///
    /// The log's other units (its model, checkpoints, externally stored values) are verified but not delivered:
    /// they belong to EventGraph, which reads them through the same scan.
    ///
    /// - Parameters:
    ///   - fromTransactionID: transactions before this one are verified but not delivered.
    ///   - body: called with each delivered transaction, in order.
    /// - Returns: a summary, including how the committed part ends (clean, torn tail, or damage).
    /// - Throws: ``LogFormatError`` for I/O errors, unsupported features or undecodable payloads (damage is reported
    ///   in the result, not thrown), or whatever `body` throws.
    @discardableResult
    public func scanTransactions(fromTransactionID: UInt64 = 0, _ body: (TransactionRecord) throws -> Void = { _ in })
        throws -> ScanReport
    {
        try scan(fromTransactionID: fromTransactionID) { record in
            if case .transaction(let transaction) = record { try body(transaction) }
        }
    }

    /// Scans the whole log, verifying every frame, and calls `body` with each committed unit in order.
    ///
    /// - Parameter fromTransactionID: transactions before this one are verified but not delivered.
    /// - Returns: a summary, including how the committed part ends (clean, torn tail, or damage).
    /// - Throws: ``LogFormatError`` for I/O errors, unsupported features or undecodable payloads (damage is reported
    ///   in the result, not thrown), or whatever `body` throws.
    /// - Parameter defersEntityChunkBodies: leave the bodies of checkpoint entity chunks unread (and undelivered)
    ///   for their first load, as a store's open does (`Docs/FileFormat-Checkpoints.md` §4).
    /// - Parameter defersTransactionDecompression: verify the checksums of transaction frames but leave their LZ4
    ///   bodies compressed, for the decoding of each transaction to decompress once (on whatever thread decodes
    ///   it). The records are those a verifying scan delivers, with the same report, as long as every LZ4 block
    ///   decompresses; one that does not is found by decoding its transaction (which throws
    ///   ``LogFormatError/Code/damaged``), or this scan throws that error where it would otherwise classify a
    ///   failure with such frames involved. Either way its caller must scan again without deferring (from the
    ///   start, as a fresh replay) to get the verifying scan's result: damage or a torn tail at that frame.
    /// - Parameter checksumsDeferredBodies: with `defersEntityChunkBodies`, still read the deferred bodies and verify
    ///   their checksums and padding (every byte of the file checked, as without deferring), leaving their decoding
    ///   to their first load: a tool that loads every chunk itself, on every core (`egctl replay`).
    @discardableResult
    package func scan(
        fromTransactionID: UInt64 = 0, defersEntityChunkBodies: Bool = false, checksumsDeferredBodies: Bool = false,
        defersTransactionDecompression: Bool = false, _ body: (LogRecord) throws -> Void = { _ in }
    ) throws -> ScanReport {
        let caller = CallerError()
        do {
            return try scanTyped(
                fromTransactionID: fromTransactionID, defersEntityChunkBodies: defersEntityChunkBodies,
                checksumsDeferredBodies: checksumsDeferredBodies,
                defersTransactionDecompression: defersTransactionDecompression
            ) { record throws(LogFormatError) in
                try caller.run { try body(record) }
            }
        } catch {
            try caller.rethrow(error)
        }
    }

    /// ``scan(fromTransactionID:_:)`` for LogFormat's own typed-throwing callers.
    ///
    /// - Parameters:
    ///   - checksumsDeferredBodies: with `defersEntityChunkBodies`, still read the deferred bodies and verify their
    ///     checksums (a rewrite's re-read of its new file), without decompressing them.
    ///   - start: where to start instead of the first frame (see ``LogScanner/Start``).
    @discardableResult
    func scanTyped(
        fromTransactionID: UInt64 = 0, defersEntityChunkBodies: Bool = false, checksumsDeferredBodies: Bool = false,
        defersTransactionDecompression: Bool = false, from start: LogScanner.Start? = nil,
        _ body: (LogRecord) throws(LogFormatError) -> Void
    ) throws(LogFormatError) -> ScanReport {
        try scanTyped(
            fromTransactionID: fromTransactionID, defersEntityChunkBodies: defersEntityChunkBodies,
            checksumsDeferredBodies: checksumsDeferredBodies,
            defersTransactionDecompression: defersTransactionDecompression, from: start, parallelChecks: false, body)!
    }

    /// Scans the whole file as ``scanTyped(fromTransactionID:defersEntityChunkBodies:checksumsDeferredBodies:defersTransactionDecompression:from:_:)``
    /// does with `defersEntityChunkBodies` and `checksumsDeferredBodies` (every frame read and checked, the deferred
    /// chunk bodies checksummed, every other payload decoded), delivering no record: a rewrite's re-read of the file
    /// it wrote. The chunk bodies' checksums and the checkpoint chunks' decoding run on other threads beside the scan
    /// (``ParallelScanChecks``); `progress` is called where the scan delivers any other record (a rewrite checks its
    /// cancellation there).
    ///
    /// - Returns: the report of the scan that checks each body and decodes each chunk in place, in order: when a
    ///   check beside the scan fails, that scan is run (it throws the error a chunk that does not decode gives).
    func verifyingScan(_ progress: () throws(LogFormatError) -> Void) throws(LogFormatError) -> ScanReport {
        let beside = try scanTyped(
            fromTransactionID: 0, defersEntityChunkBodies: true, checksumsDeferredBodies: true,
            defersTransactionDecompression: false, from: nil, parallelChecks: true
        ) { _ throws(LogFormatError) in try progress() }
        if let beside { return beside }
        return try scanTyped(defersEntityChunkBodies: true, checksumsDeferredBodies: true) { _ in }
    }

    /// The scan of both; with `parallelChecks`, checkpoint chunks are decoded and deferred bodies checked beside it,
    /// and neither is delivered: nil when one failed.
    private func scanTyped(
        fromTransactionID: UInt64, defersEntityChunkBodies: Bool, checksumsDeferredBodies: Bool,
        defersTransactionDecompression: Bool, from start: LogScanner.Start?, parallelChecks: Bool,
        _ body: (LogRecord) throws(LogFormatError) -> Void
    ) throws(LogFormatError) -> ScanReport? {
        let scanFile = try LogFile(path: path, flags: O_RDONLY, faults: nil)
        let size = try scanFile.size()
        var scanner = LogScanner(
            window: FileWindow(file: scanFile, limit: size), header: header,
            defersEntityChunkBodies: defersEntityChunkBodies, checksumsDeferredBodies: checksumsDeferredBodies,
            defersTransactionDecompression: defersTransactionDecompression)
        let checks = parallelChecks ? ParallelScanChecks(file: scanner.window.shared, seed: header.checksumSeed) : nil
        scanner.parallelChecks = checks
        var converter = ScanRecordConverter(path: path, fromTransactionID: fromTransactionID)
        let scanned = Result { () throws(LogFormatError) in
            let result = try scanner.scan(from: start) { event throws(LogFormatError) in
                if let checks, case .checkpointChunk(let payload, let byteOffset) = event {
                    checks.decodeChunk(payload, at: byteOffset)
                } else if let record = try converter.record(for: event) {
                    try body(record)
                }
            }
            try converter.finish()
            return result
        }
        // No check outlives the scan, whether it ended or threw.
        let failed = Result { () throws(LogFormatError) in try checks?.finish() }
        let result = try scanned.get()
        if try failed.get() != nil { return nil }
        var report = ScanReport(result, fileByteCount: size, headerCopyDamaged: headerCopyDamaged)
        if case .torn(var tail) = report.tail {
            tail.transactionIDs = try scanner.transactionIDs(
                inTailFrom: tail.byteOffset, after: result.lastTransactionID)
            tail.isPreallocatedSpace = try scanner.isZeroFilled(from: tail.byteOffset)
            report.tail = .torn(tail)
        }
        return report
    }

    /// Converts a scanner event to a public record, decoding schema and checkpoint payloads.
    static func record(for event: ScanEvent, path: String, fromTransactionID: UInt64) throws(LogFormatError)
        -> LogRecord?
    {
        func decoding<T>(_ offset: UInt64, _ what: String, _ decode: () throws -> T) throws(LogFormatError) -> T {
            do {
                return try decode()
            } catch let error as LogFormatError {
                throw LogFormatError(.malformedPayload, "\(what): \(error.message)", path: path, byteOffset: offset)
            } catch {
                throw LogFormatError(.malformedPayload, "\(what): \(error)", path: path, byteOffset: offset)
            }
        }
        switch event {
        case .schema(let payload, let offset):
            return .schema(try decoding(offset, "schema") { try SchemaPayload(decoding: payload) }, byteOffset: offset)
        case .transaction(let id, let payload, let blobs, let offset):
            guard id >= fromTransactionID else { return nil }
            return .transaction(TransactionRecord(transactionID: id, body: payload, blobs: blobs, byteOffset: offset))
        case .checkpointBegin(let payload, let offset):
            return .checkpointBegin(
                try decoding(offset, "checkpoint begin") { try CheckpointBegin(decoding: payload) }, byteOffset: offset)
        case .checkpointChunk(let payload, let offset):
            // A chunk spanning fragments is decoded while its fragments are read again, one at a time.
            return .checkpointChunk(
                try decoding(offset, "checkpoint chunk") { try CheckpointChunk(decoding: payload) }, byteOffset: offset)
        case .checkpointBlob(let location):
            return .checkpointBlob(location)
        case .checkpointDirectory(let directory, let offset):
            return .checkpointDirectory(directory, byteOffset: offset)
        case .checkpointEnd(let payload, let offset):
            return .checkpointEnd(
                try decoding(offset, "checkpoint end") { try CheckpointEnd(decoding: payload) }, byteOffset: offset)
        case .dictionary(let payload, let offset):
            return .dictionary(byteCount: payload.count, byteOffset: offset)
        case .seal(let offset):
            return .seal(byteOffset: offset)
        case .extensionFrame(let type, let payload, let offset):
            return .extensionFrame(type: type, payload: payload, byteOffset: offset)
        }
    }

    /// Reads and verifies the single frame at `byteOffset` and returns its header and decompressed payload.
    ///
    /// The object layer reads externally stored binary values this way, from offsets learned while replaying.
    package func readFrame(at byteOffset: UInt64) throws(LogFormatError) -> (FrameHeader, [UInt8]) {
        let (frameHeader, padded) = try readPaddedFrame(at: byteOffset)
        let seed = header.checksumSeed
        let result = padded.withUnsafeBytes {
            FrameBody.payload(of: $0, header: frameHeader, seed: seed, dictionary: nil)
        }
        switch result {
        case .success(let payload):
            return (frameHeader, payload)
        case .failure(let rejection):
            throw LogFormatError(
                .damaged, "frame at byte offset \(byteOffset) fails its checks: \(rejection.reason)", path: path,
                byteOffset: byteOffset)
        }
    }

    /// Reads the single frame at `byteOffset` as ``readFrame(at:)`` does, verifying its header, its body's checksum
    /// and its padding, but returns its body as stored (compressed as the header's codec says), not decompressed:
    /// what a rewrite copies into a new file unchanged (``StoredEntityChunk``).
    package func readStoredFrame(at byteOffset: UInt64) throws(LogFormatError) -> (FrameHeader, [UInt8]) {
        let (frameHeader, padded) = try readPaddedFrame(at: byteOffset)
        let seed = header.checksumSeed
        if let rejection = padded.withUnsafeBytes({ FrameBody.checkStored($0, header: frameHeader, seed: seed) }) {
            throw LogFormatError(
                .damaged, "frame at byte offset \(byteOffset) fails its checks: \(rejection.reason)", path: path,
                byteOffset: byteOffset)
        }
        return (frameHeader, Array(padded[0..<Int(frameHeader.bodyByteCount)]))
    }

    /// The checked header of the frame at `byteOffset` and its body with the padding after it, as on disk (not
    /// verified yet).
    private func readPaddedFrame(at byteOffset: UInt64) throws(LogFormatError) -> (FrameHeader, [UInt8]) {
        guard byteOffset >= LogFileHeader.framesByteOffset, byteOffset % UInt64(FrameHeader.alignment) == 0 else {
            throw LogFormatError(.invalidArgument, "no frame can start at byte offset \(byteOffset)", path: path)
        }
        let headerBytes = try file.read(count: FrameHeader.byteCount, at: byteOffset)
        guard headerBytes.count == FrameHeader.byteCount else {
            throw LogFormatError(
                .damaged, "truncated frame header at byte offset \(byteOffset)", path: path,
                byteOffset: byteOffset)
        }
        let seed = header.checksumSeed
        let decoded = headerBytes.withUnsafeBytes { FrameHeader.decode($0, seed: seed) }
        guard case .success(let frameHeader) = decoded else {
            throw LogFormatError(
                .damaged, "frame header at byte offset \(byteOffset) fails its checks", path: path,
                byteOffset: byteOffset)
        }
        guard frameHeader.codec != .lz4Dictionary else {
            throw LogFormatError(
                .invalidArgument, "frame at byte offset \(byteOffset) needs its file's dictionary; read it by scanning",
                path: path, byteOffset: byteOffset)
        }
        let paddedCount = Int(frameHeader.frameByteCount) - FrameHeader.byteCount
        let padded = try file.read(count: paddedCount, at: byteOffset + UInt64(FrameHeader.byteCount))
        guard padded.count == paddedCount else {
            throw LogFormatError(
                .damaged, "truncated frame body at byte offset \(byteOffset)", path: path, byteOffset: byteOffset)
        }
        return (frameHeader, padded)
    }

    /// Reads an externally stored binary value from its blob frame.
    package func readBlob(at byteOffset: UInt64) throws(LogFormatError) -> [UInt8] {
        let (frameHeader, payload) = try readFrame(at: byteOffset)
        guard frameHeader.type == .blob else {
            throw LogFormatError(
                .invalidArgument, "the frame at byte offset \(byteOffset) is a \(frameHeader.type) frame, not a blob",
                path: path, byteOffset: byteOffset)
        }
        return payload
    }
}

extension ScanReport {
    init(_ result: ScanResult, fileByteCount: UInt64, headerCopyDamaged: Bool) {
        let tail: LogTail =
            switch result.tail {
            case .clean: .clean
            case .torn(let offset, let count, let reason):
                .torn(TornTail(byteOffset: offset, byteCount: count, reason: reason))
            case .damaged(let report): .damaged(report)
            }
        self.init(
            fileByteCount: fileByteCount, committedByteCount: result.committedEnd, frameCount: result.frameCount,
            transactionCount: result.transactionCount, lastTransactionID: result.lastTransactionID,
            rawPayloadByteCount: result.rawPayloadByteCount, storedBodyByteCount: result.storedBodyByteCount,
            endsWithSeal: result.endsWithSeal, headerCopyDamaged: headerCopyDamaged, tail: tail)
    }
}
