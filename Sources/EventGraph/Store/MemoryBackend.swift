import LogFormat
import Synchronization

/// A log kept in memory, encoded exactly as the file would hold it; for tests that need no file.
final class MemoryBackend: LogBackend {
    private enum Unit {
        case schema([UInt8])
        case transaction(id: UInt64, payload: [UInt8], blobHandles: [UInt64])
        case checkpointBegin([UInt8])
        case checkpointChunk([UInt8])
        case checkpointBlob(BlobKey, handle: UInt64)
        case checkpointEnd([UInt8])
    }

    private struct State {
        var units: [Unit] = []
        var blobs: [[UInt8]] = []
        var isClosed = false
        /// When set, the next append fails with this error (fault injection for tests).
        var failNextAppend: LogFormatError?
    }

    let storeUUID: LogUUID
    let isReadOnly = false
    private let state = Mutex(State())

    init(storeUUID: LogUUID = .random()) {
        self.storeUUID = storeUUID
    }

    /// Makes the next append fail.
    func failNextAppend(with error: LogFormatError) {
        state.withLock { $0.failNextAppend = error }
    }

    /// The number of committed units (schema, transactions, checkpoint frames).
    var unitCount: Int { state.withLock { $0.units.count } }

    func replay(_ body: (ReplayRecord) throws(EventGraphError) -> Void) throws(EventGraphError) {
        let units = state.withLock { $0.units }
        do {
            for unit in units {
                switch unit {
                case .schema(let bytes): try body(.schema(try SchemaPayload(decoding: bytes)))
                case .transaction(_, let payload, let handles):
                    try body(.transaction(try Changeset(decoding: payload), blobHandles: handles))
                case .checkpointBegin(let bytes): try body(.checkpointBegin(try CheckpointBegin(decoding: bytes)))
                case .checkpointChunk(let bytes): try body(.checkpointChunk(try CheckpointChunk(decoding: bytes)))
                case .checkpointBlob(let key, let handle):
                    try body(.checkpointBlob(transactionID: key.transactionID, index: key.index, handle: handle))
                case .checkpointEnd(let bytes): try body(.checkpointEnd(try CheckpointEnd(decoding: bytes)))
                }
            }
        } catch let error as LogFormatError {
            throw EventGraphError(error)
        } catch let error as EventGraphError {
            throw error
        } catch {
            throw EventGraphError(.log, "\(error)")
        }
    }

    func append(schema: SchemaPayload) throws(EventGraphError) {
        let bytes: [UInt8]
        do { bytes = try schema.encoded() } catch { throw EventGraphError(error) }
        try state.withLock { state throws(EventGraphError) in
            try Self.checkWritable(&state)
            state.units.append(.schema(bytes))
        }
    }

    func enqueueTransaction(id: UInt64, payload: [UInt8], blobs: [[UInt8]]) throws(EventGraphError) -> QueuedTransaction
    {
        QueuedTransaction(transactionID: id, blobHandles: try appendTransaction(id: id, payload: payload, blobs: blobs))
    }

    /// Memory is "durable" as soon as a transaction is queued.
    func waitUntilDurable(_ transaction: QueuedTransaction) throws(EventGraphError) {}

    private func appendTransaction(id: UInt64, payload: [UInt8], blobs: [[UInt8]]) throws(EventGraphError) -> [UInt64] {
        try state.withLock { state throws(EventGraphError) in
            try Self.checkWritable(&state)
            let handles = blobs.map { bytes in
                state.blobs.append(bytes)
                return UInt64(state.blobs.count - 1)
            }
            state.units.append(.transaction(id: id, payload: payload, blobHandles: handles))
            return handles
        }
    }

    /// Blobs stay in memory for good, so a handle never goes stale: the generation is always 0.
    func readBlob(_ key: BlobKey, at handle: UInt64, generation: UInt64) throws(EventGraphError) -> [UInt8]? {
        try state.withLock { state throws(EventGraphError) in
            guard handle < state.blobs.count else {
                throw EventGraphError(.log, "no blob with handle \(handle)")
            }
            return state.blobs[Int(handle)]
        }
    }

    func readOnlyView() -> any LogBackend { ViewBackend(base: self) }

    func rewrite(
        schema: SchemaPayload, checkpoint: CheckpointInput, install: (_ handles: [UInt64], _ generation: UInt64) -> Void
    ) throws(EventGraphError) {
        do {
            let schemaBytes = try schema.encoded()
            let beginBytes = try checkpoint.begin.encoded()
            let chunkBytes = try checkpoint.chunks.map { chunk throws(LogFormatError) in try chunk.encoded() }
            let endBytes = try checkpoint.end.encoded()
            try state.withLock { state throws(EventGraphError) in
                try Self.checkWritable(&state)
                let tail = state.units.filter { unit in
                    if case .transaction(let id, _, _) = unit { id > checkpoint.begin.lastTransactionID } else { false }
                }
                var units: [Unit] = [.schema(schemaBytes), .checkpointBegin(beginBytes)]
                var handles: [UInt64] = []
                for (reference, bytes) in checkpoint.blobs {
                    state.blobs.append(bytes)
                    let handle = UInt64(state.blobs.count - 1)
                    handles.append(handle)
                    units.append(
                        .checkpointBlob(
                            BlobKey(transactionID: reference.transactionID, index: reference.index), handle: handle))
                }
                units += chunkBytes.map(Unit.checkpointChunk)
                units.append(.checkpointEnd(endBytes))
                state.units = units + tail
                install(handles, 0)
            }
        } catch let error as LogFormatError {
            throw EventGraphError(error)
        } catch let error as EventGraphError {
            throw error
        } catch {
            throw EventGraphError(.log, "\(error)")
        }
    }

    func close() throws(EventGraphError) {
        state.withLock { $0.isClosed = true }
    }

    private static func checkWritable(_ state: inout State) throws(EventGraphError) {
        if state.isClosed { throw EventGraphError(.closed, "the in-memory log is closed") }
        if let error = state.failNextAppend {
            state.failNextAppend = nil
            throw EventGraphError(error)
        }
    }
}
