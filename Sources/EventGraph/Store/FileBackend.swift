import Dispatch
import LogFormat

/// A store's log in a file: LogFormat's writer for appends (exclusive lock, group commit, recovery) and a
/// reader for lazy blob reads and re-scans.
///
/// An in-memory store is this same backend on a file in a ``MemoryVolume``: the same writer, reader, recovery and
/// rewrite, on bytes kept in memory.
final class FileBackend: LogBackend {
    let path: String
    let storeUUID: LogUUID
    /// The in-memory volume the log lives in, kept alive as long as the store or a view of it is.
    private let volume: MemoryVolume?
    let writer: LogWriter?
    /// Replaced after a rewrite, with the next generation (the old reader still reads the replaced file).
    private let current: LockedValue<(reader: LogReader, generation: UInt64)>
    /// What the writer's recovery truncated, or what the last read-only replay did not read.
    private let recovery: LockedValue<StoreRecoveryReport?>
    /// What the last replay of the log said about saves across stores.
    private let ledger: LockedValue<CrossStoreLedger>
    /// Where the log's last checkpoint ends (its end frame; 0 without one): the open's scan, then each rewrite.
    private let checkpointEnd: LockedValue<UInt64>

    var isReadOnly: Bool { writer == nil }
    var recoveryReport: StoreRecoveryReport? { recovery.withLock { $0 } }
    var crossStoreLedger: CrossStoreLedger { ledger.withLock { $0 } }

    var tailByteCount: UInt64 {
        guard let writer else { return 0 }
        let end = writer.byteCount
        return end - min(end, checkpointEnd.withLock { $0 })
    }

    private init(
        path: String, writer: LogWriter?, reader: LogReader, volume: MemoryVolume? = nil,
        ledger: CrossStoreLedger = CrossStoreLedger(), checkpointEnd: UInt64 = 0
    ) {
        self.ledger = LockedValue(ledger)
        self.checkpointEnd = LockedValue(checkpointEnd)
        self.path = path
        self.volume = volume
        self.writer = writer
        self.storeUUID = reader.header.storeUUID
        self.current = LockedValue((reader, 0))
        self.recovery = LockedValue(writer.flatMap { StoreRecoveryReport(path: path, recovery: $0.recoveryReport) })
    }

    /// Opens (or creates) the log for writing, delivering every committed record to `replay` during the one
    /// recovery scan.
    static func open(
        path: String, configuration: ModelContainer.Configuration, volume: MemoryVolume? = nil,
        replay: (ReplayRecord) throws(EventGraphError) -> Void
    ) throws(EventGraphError) -> FileBackend {
        var options = LogWriter.Options(
            durability: configuration.durability.durability, createIfMissing: configuration.createIfMissing)
        options.storeUUID = nil
        options.faultInjector = configuration.faultInjector
        options.filePermissions = configuration.filePermissions
        // Open reads the checkpoint's directory, not its entity chunks; they are read on first touch through a
        // reader of the file opened now (`Docs/FileFormat-Checkpoints.md` §4).
        options.defersEntityChunkBodies = true
        return try EventGraphError.converting(path: path) {
            var ledger = CrossStoreLedger()
            var chunkReader: LogReader?
            var checkpointEnd: UInt64 = 0
            func process(_ record: LogRecord, _ changeset: ReplayChangeset?) throws {
                if case .checkpointEnd(_, let byteOffset) = record { checkpointEnd = byteOffset }
                let converted = try Self.convert(record, changeset: changeset) {
                    () throws(LogFormatError) -> LogReader in
                    if let chunkReader { return chunkReader }
                    // Its reads pass through the configuration's fault injector (tests of failing chunk reads).
                    let reader = try LogReader(path: path, faults: configuration.faultInjector)
                    chunkReader = reader
                    return reader
                }
                ledger.note(record, crossStore: converted?.changesetHeader?.crossStore)
                if let converted { try replay(converted) }
            }
            // Large transactions are decoded on another thread while the ones before them are applied (a log
            // without a checkpoint of 1M posts: its open spent 41 % of its time decoding); the records are still
            // replayed here, in log order; those the scan delivered last, once it ends (before recovery changes the
            // file, so that a failure to replay them leaves it as it was).
            var pending = DecodingAhead()
            let writer = try LogWriter(
                path: path, options: options, replay: { record in try pending.take(record, process: process) },
                replayEnded: { try pending.drain(process) })
            do {
                return FileBackend(
                    path: path, writer: writer, reader: try LogReader(path: path), volume: volume, ledger: ledger,
                    checkpointEnd: checkpointEnd)
            } catch {
                try? writer.close()
                throw error
            }
        }
    }

    /// Creates a store's log in a new in-memory volume (see ``MemoryVolume``).
    static func openInMemory(
        configuration: ModelContainer.Configuration, replay: (ReplayRecord) throws(EventGraphError) -> Void
    ) throws(EventGraphError) -> FileBackend {
        let volume = MemoryVolume()
        return try open(path: volume.file("store.eglog"), configuration: configuration, volume: volume, replay: replay)
    }

    /// Opens the log read-only: no lock, never modified.
    static func openReadOnly(path: String) throws(EventGraphError) -> FileBackend {
        do {
            return FileBackend(path: path, writer: nil, reader: try LogReader(path: path))
        } catch {
            throw EventGraphError(error)
        }
    }

    /// Converts a log record for the replayer.
    ///
    /// - Parameter chunkReader: the reader of the file being scanned, when the scan defers entity chunks (the
    ///   directory then tells the replayer where to load them from); `nil` for scans that delivered every chunk,
    ///   whose directory is not needed.
    /// - Parameter changeset: a transaction's changeset, decoded already (see ``DecodingAhead``).
    static func convert(
        _ record: LogRecord, changeset: ReplayChangeset? = nil,
        chunkReader: (() throws(LogFormatError) -> LogReader)? = nil
    ) throws(LogFormatError) -> ReplayRecord? {
        if case .checkpointDirectory(let directory, _) = record {
            guard let chunkReader else { return nil }
            return .checkpointDirectory(directory, source: try chunkReader())
        }
        if case .transaction(let transaction) = record {
            let decoded = if let changeset { changeset } else { try ReplayChangeset(transaction) }
            return .transaction(
                decoded, blobHandles: transaction.blobs.sorted { $0.index < $1.index }.map(\.byteOffset))
        }
        return switch record {
        case .schema(let schema, _): .schema(schema)
        case .checkpointBegin(let begin, _): .checkpointBegin(begin)
        case .checkpointChunk(let chunk, _): .checkpointChunk(chunk)
        case .checkpointBlob(let location):
            .checkpointBlob(transactionID: location.transactionID, index: location.index, handle: location.byteOffset)
        case .checkpointEnd(let end, _): .checkpointEnd(end)
        case .dictionary, .seal, .extensionFrame, .checkpointDirectory, .transaction: nil
        }
    }

    /// Delivers the committed records. A read-only backend stops at damage (the view "up to the damage" that the
    /// damage error advises) and records what it did not read; a writer's log cannot hold damage it did not
    /// refuse at open, so damage found later is an error.
    ///
    /// With `lastTransactionID` (a view *as of* it), the records stop before the first transaction after it: the
    /// rest of the log is not decoded, only checked by a second scan that verifies its frames for the report.
    func replay(
        through lastTransactionID: UInt64?, _ body: (ReplayRecord) throws(EventGraphError) -> Void
    ) throws(EventGraphError) {
        let reader = current.withLock { $0.reader }
        var ledger = CrossStoreLedger()
        let report = try EventGraphError.converting(path: reader.path) {
            func process(_ record: LogRecord, _ changeset: ReplayChangeset?) throws {
                let converted = try Self.convert(record, changeset: changeset, chunkReader: { reader })
                ledger.note(record, crossStore: converted?.changesetHeader?.crossStore)
                guard let converted else { return }
                try body(converted)
            }
            // Large transactions are decoded ahead, as at open; those the scan delivered last are replayed once it
            // returns. The scan stops at the first error `body` throws and rethrows it unchanged.
            var pending = DecodingAhead()
            var following: LogRecord?
            do {
                let report = try reader.scan(defersEntityChunkBodies: true) { record in
                    // Transaction IDs only grow along a log: nothing from the first transaction after the view's
                    // last belongs to the view, and it is not decoded (the decoding starts when it is taken).
                    if let lastTransactionID, case .transaction(let transaction) = record,
                        transaction.transactionID > lastTransactionID
                    {
                        following = record
                        throw StopScan()
                    }
                    try pending.take(record, process: process)
                }
                try pending.drain(process)
                return report
            } catch is StopScan {
                try pending.drain(process)
                // Noted, undecoded, so that the ledger knows a transaction follows the view's last: that one, when
                // it is a part of a save across stores, committed (§3.6), as the whole log says.
                if let following { ledger.note(following, crossStore: nil) }
                // The frames after the stop are still verified for the report (damage that a view of an older
                // transaction names too).
                return try reader.scan(defersEntityChunkBodies: true)
            }
        }
        self.ledger.withLock { $0 = ledger }
        if isReadOnly {
            recovery.withLock { $0 = StoreRecoveryReport(path: path, scan: report) }
        } else if case .damaged(let damage) = report.tail {
            throw EventGraphError(.log, "\(reader.path): \(damage.summary)")
        }
    }

    func append(schema: SchemaPayload) throws(EventGraphError) {
        guard let writer else { throw EventGraphError(.readOnly, "\(path) is open read-only") }
        do { try writer.append(schema: schema) } catch { throw EventGraphError(error) }
    }

    func enqueueTransaction(
        id: UInt64, payload: [UInt8], blobs: [[UInt8]], encodedPayload: EncodedTransactionFrames?
    ) throws(EventGraphError) -> QueuedTransaction {
        guard let writer else { throw EventGraphError(.readOnly, "\(path) is open read-only") }
        do {
            let appended = try writer.enqueueTransaction(
                id: id, payload: payload, blobs: blobs, encodedPayload: encodedPayload)
            return QueuedTransaction(
                transactionID: id, blobHandles: appended.blobs.sorted { $0.index < $1.index }.map(\.byteOffset),
                appended: appended)
        } catch {
            throw EventGraphError(error)
        }
    }

    func sharedFrameEncoding(forTransaction id: UInt64) -> SharedFrameEncoding? {
        guard let writer else { return nil }
        return SharedFrameEncoding(
            transactionID: id, seed: writer.frameSeed, fragmentByteCount: writer.fragmentByteCount)
    }

    func waitUntilDurable(_ transaction: QueuedTransaction) throws(EventGraphError) {
        guard let writer, let appended = transaction.appended else { return }
        do { try writer.waitUntilDurable(appended) } catch { throw EventGraphError(error) }
    }

    func sync() throws(EventGraphError) {
        guard let writer else { throw EventGraphError(.readOnly, "\(path) is open read-only") }
        do { try writer.sync() } catch { throw EventGraphError(error) }
    }

    func readBlob(_ key: BlobKey, at handle: UInt64, generation: UInt64) throws(EventGraphError) -> [UInt8]? {
        guard let reader = current.withLock({ $0.generation == generation ? $0.reader : nil }) else { return nil }
        let frame: (header: FrameHeader, payload: [UInt8])
        do throws(LogFormatError) { frame = try reader.readFrame(at: handle) } catch { throw EventGraphError(error) }
        // The handle came from this very file, so anything but the blob itself is damage, never a value to return.
        guard frame.header.type == .blob, frame.header.transactionID == key.transactionID,
            frame.header.partIndex == key.index
        else {
            throw EventGraphError(
                .log,
                "\(path): the frame at byte offset \(handle) is a \(frame.header.type) frame of transaction "
                    + "\(frame.header.transactionID), not external value \(key.index) of transaction "
                    + "\(key.transactionID)")
        }
        return frame.payload
    }

    func readOnlyView() -> any LogBackend {
        FileBackend(path: path, writer: nil, reader: current.withLock { $0.reader }, volume: volume)
    }

    func rewriteAnchor() throws(EventGraphError) -> RewriteAnchor {
        guard let writer else { throw EventGraphError(.readOnly, "\(path) is open read-only") }
        do { return try writer.rewriteAnchor() } catch { throw EventGraphError(error) }
    }

    func prepareRewrite(
        schema: SchemaPayload, checkpoint: CheckpointInput, from anchor: RewriteAnchor,
        cancellation: RewriteCancellation
    ) throws(EventGraphError) -> PreparedRewrite {
        guard let writer else { throw EventGraphError(.readOnly, "\(path) is open read-only") }
        return try EventGraphError.converting(path: path) {
            try writer.prepareRewrite(
                from: anchor, schema: schema, begin: checkpoint.begin, end: { () throws in try checkpoint.end() },
                cancellation: cancellation,
                writeCheckpoint: { sink in
                    for blob in checkpoint.blobs { try sink.appendBlob(blob.reference, bytes: blob.bytes) }
                    for chunk in checkpoint.chunks { try sink.append(chunk) }
                    try sink.appendEntityChunks(
                        count: checkpoint.entityChunks.count, content: checkpoint.entityChunks.content)
                    let indexes = checkpoint.indexChunks()
                    // Each chunk is copied out of its index's entries by the worker that encodes it.
                    try sink.appendIndexChunks(of: indexes.map(\.index), chunkCounts: indexes.map(\.chunkCount)) {
                        index, chunk in indexes[index].content(chunk)
                    }
                    // Let go of on a worker, beside the end frame, the sync and the re-read: freeing a 1M-post
                    // store's index entries was the last serial step of compact-1m (the input's teardown after the
                    // re-read, one core idle: h90's profile).
                    DispatchQueue.global().async { withExtendedLifetime(indexes) {} }
                },
                verify: { temporaryPath in
                    // LogFormat re-read every frame of the new file and checked its checksums; on request, also
                    // replay it from its bytes alone (the checkpoint, before any tail is copied) and compare its
                    // state digest with the live state's.
                    guard checkpoint.verifiesByReplay else { return }
                    let graph = try LogGraph.replaying(path: temporaryPath)
                    let digest = graph.digest()
                    guard graph.anomalies.isEmpty, digest == (try checkpoint.digest.value()) else {
                        throw EventGraphError(
                            .log, "the rewritten log's state digest \(digest) differs from the live state's")
                    }
                })
        }
    }

    func finishRewrite(
        _ prepared: PreparedRewrite, keepingPreviousAt previousPath: String?, cancellation: RewriteCancellation,
        install: (_ handles: [BlobKey: UInt64], _ generation: UInt64) -> Void
    ) throws(EventGraphError) {
        guard let writer else { throw EventGraphError(.readOnly, "\(path) is open read-only") }
        return try EventGraphError.converting(path: path) {
            let report = try writer.finishRewrite(
                prepared, keepingPreviousAt: previousPath, cancellation: cancellation)
            let newReader = try LogReader(path: path)
            var handles: [BlobKey: UInt64] = [:]
            handles.reserveCapacity(report.checkpointBlobs.count + report.copiedBlobs.count)
            for blob in report.checkpointBlobs + report.copiedBlobs {
                handles[BlobKey(transactionID: blob.transactionID, index: blob.index)] = blob.byteOffset
            }
            current.withLock { current in
                current = (newReader, current.generation + 1)
                install(handles, current.generation)
            }
            checkpointEnd.withLock { $0 = report.checkpointEndByteOffset }
        }
    }

    func close() throws(EventGraphError) {
        guard let writer else { return }
        do { try writer.close() } catch { throw EventGraphError(error) }
    }
}
