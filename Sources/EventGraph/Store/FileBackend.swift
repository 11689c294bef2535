import LogFormat
import Synchronization

/// A store's log in a file: LogFormat's writer for appends (exclusive lock, group commit, recovery) and a
/// reader for lazy blob reads and re-scans.
final class FileBackend: LogBackend {
    let path: String
    let storeUUID: LogUUID
    private let writer: LogWriter?
    /// Replaced after a rewrite (the old reader still reads the replaced file).
    private let reader: Mutex<LogReader>
    /// What the writer's recovery truncated, or what the last read-only replay did not read.
    private let recovery: Mutex<StoreRecoveryReport?>

    var isReadOnly: Bool { writer == nil }
    var recoveryReport: StoreRecoveryReport? { recovery.withLock { $0 } }

    private init(path: String, writer: LogWriter?, reader: LogReader) {
        self.path = path
        self.writer = writer
        self.storeUUID = reader.header.storeUUID
        self.reader = Mutex(reader)
        self.recovery = Mutex(writer.flatMap { StoreRecoveryReport(path: path, recovery: $0.recoveryReport) })
    }

    /// Opens (or creates) the log for writing, delivering every committed record to `replay` during the one
    /// recovery scan.
    static func open(
        path: String, configuration: ModelContainer.Configuration,
        replay: (ReplayRecord) throws(EventGraphError) -> Void
    ) throws(EventGraphError) -> FileBackend {
        var options = LogWriter.Options(durability: configuration.durability, createIfMissing: configuration.createIfMissing)
        options.storeUUID = nil
        options.faultInjector = configuration.faultInjector
        options.filePermissions = configuration.filePermissions
        return try EventGraphError.converting(path: path) {
            let writer = try LogWriter(path: path, options: options) { record in
                if let converted = try Self.convert(record) { try replay(converted) }
            }
            do {
                return FileBackend(path: path, writer: writer, reader: try LogReader(path: path))
            } catch {
                try? writer.close()
                throw error
            }
        }
    }

    /// Opens the log read-only: no lock, never modified.
    static func openReadOnly(path: String) throws(EventGraphError) -> FileBackend {
        do {
            return FileBackend(path: path, writer: nil, reader: try LogReader(path: path))
        } catch {
            throw EventGraphError(error)
        }
    }

    static func convert(_ record: LogRecord) throws(LogFormatError) -> ReplayRecord? {
        switch record {
        case .schema(let schema, _): .schema(schema)
        case .transaction(let transaction):
            .transaction(
                try transaction.changeset(),
                blobHandles: transaction.blobs.sorted { $0.index < $1.index }.map(\.byteOffset))
        case .checkpointBegin(let begin, _): .checkpointBegin(begin)
        case .checkpointChunk(let chunk, _): .checkpointChunk(chunk)
        case .checkpointBlob(let location):
            .checkpointBlob(transactionID: location.transactionID, index: location.index, handle: location.byteOffset)
        case .checkpointEnd(let end, _): .checkpointEnd(end)
        case .dictionary, .seal, .extensionFrame: nil
        }
    }

    /// Delivers the committed records. A read-only backend stops at damage (the view "up to the damage" that the
    /// damage error advises) and records what it did not read; a writer's log cannot hold damage it did not
    /// refuse at open, so damage found later is an error.
    func replay(_ body: (ReplayRecord) throws(EventGraphError) -> Void) throws(EventGraphError) {
        let reader = self.reader.withLock { $0 }
        let report = try EventGraphError.converting(path: reader.path) {
            // The scan stops at the first error `body` throws and rethrows it unchanged.
            try reader.scan { record in
                guard let converted = try Self.convert(record) else { return }
                try body(converted)
            }
        }
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

    func enqueueTransaction(id: UInt64, payload: [UInt8], blobs: [[UInt8]]) throws(EventGraphError) -> QueuedTransaction {
        guard let writer else { throw EventGraphError(.readOnly, "\(path) is open read-only") }
        do {
            let appended = try writer.enqueueTransaction(id: id, payload: payload, blobs: blobs)
            return QueuedTransaction(
                transactionID: id, blobHandles: appended.blobs.sorted { $0.index < $1.index }.map(\.byteOffset),
                appended: appended)
        } catch {
            throw EventGraphError(error)
        }
    }

    func waitUntilDurable(_ transaction: QueuedTransaction) throws(EventGraphError) {
        guard let writer, let appended = transaction.appended else { return }
        do { try writer.waitUntilDurable(appended) } catch { throw EventGraphError(error) }
    }

    func readBlob(at handle: UInt64) throws(EventGraphError) -> [UInt8] {
        let reader = self.reader.withLock { $0 }
        do throws(LogFormatError) { return try reader.readBlob(at: handle) } catch { throw EventGraphError(error) }
    }

    func rewrite(schema: SchemaPayload, checkpoint: CheckpointInput) throws(EventGraphError) -> [UInt64] {
        guard let writer else { throw EventGraphError(.readOnly, "\(path) is open read-only") }
        return try EventGraphError.converting(path: path) {
            let report = try writer.rewrite(
                schema: schema, begin: checkpoint.begin, end: checkpoint.end,
                writeCheckpoint: { sink in
                    for blob in checkpoint.blobs { try sink.appendBlob(blob.reference, bytes: blob.bytes) }
                    for chunk in checkpoint.chunks { try sink.append(chunk) }
                },
                verify: { temporaryPath in
                    // Replay the new file from its bytes alone and compare its state digest with the live state's.
                    var graph = LogGraph()
                    try LogReader(path: temporaryPath).scan { try graph.apply($0) }
                    let digest = graph.digest()
                    guard digest.bytes == checkpoint.end.stateDigest else {
                        throw EventGraphError(
                            .log, "the rewritten log's state digest \(digest) differs from the live state's")
                    }
                })
            let newReader = try LogReader(path: path)
            reader.withLock { $0 = newReader }
            return report.checkpointBlobs.map(\.byteOffset)
        }
    }

    func close() throws(EventGraphError) {
        guard let writer else { return }
        do { try writer.close() } catch { throw EventGraphError(error) }
    }
}

/// A read-only window on another backend (for *as of* views of an open store): closing it closes nothing.
struct ViewBackend: LogBackend {
    let base: any LogBackend
    var storeUUID: LogUUID { base.storeUUID }
    var isReadOnly: Bool { true }

    func replay(_ body: (ReplayRecord) throws(EventGraphError) -> Void) throws(EventGraphError) { try base.replay(body) }
    func append(schema: SchemaPayload) throws(EventGraphError) { throw EventGraphError(.readOnly, "a view is read-only") }
    func enqueueTransaction(id: UInt64, payload: [UInt8], blobs: [[UInt8]]) throws(EventGraphError) -> QueuedTransaction {
        throw EventGraphError(.readOnly, "a view is read-only")
    }
    func waitUntilDurable(_ transaction: QueuedTransaction) throws(EventGraphError) {
        throw EventGraphError(.readOnly, "a view is read-only")
    }
    func readBlob(at handle: UInt64) throws(EventGraphError) -> [UInt8] { try base.readBlob(at: handle) }
    func rewrite(schema: SchemaPayload, checkpoint: CheckpointInput) throws(EventGraphError) -> [UInt64] {
        throw EventGraphError(.readOnly, "a view is read-only")
    }
    func close() throws(EventGraphError) {}
}
