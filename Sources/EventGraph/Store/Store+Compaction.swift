import LogFormat
import Synchronization

/// What a compaction did.
public struct CompactionReport: Hashable, Sendable {
    /// The last transaction the checkpoint contains.
    public var lastTransactionID: UInt64
    /// How many live objects the checkpoint holds.
    public var objectCount: Int
    /// How many externally stored values were copied.
    public var blobCount: Int
    /// The digest of the state before and after (equal, or the rewrite is refused).
    public var stateDigest: StateDigest
}

extension Store {
    /// The largest number of objects in one checkpoint chunk (chunks are also split to fit a frame).
    static let checkpointChunkObjectCount = 2048

    /// The digest of the committed state: the ``StateDigest`` of the graph its checkpoint would describe, equal to
    /// what `egctl replay --summary` computes from the log.
    func stateDigest() -> StateDigest {
        let snapshot = state.withLock { $0 }
        let (begin, chunks) = checkpointRecords(of: snapshot)
        return LogGraph(schema: model.schema, begin: begin, chunks: chunks).digest()
    }

    /// Rewrites the log as the schema plus a checkpoint of the live state.
    func compact() throws(EventGraphError) -> CompactionReport {
        guard !isReadOnly else { throw EventGraphError(.readOnly, "the store is read-only") }
        return try withDrainedQueue { queue throws(EventGraphError) -> CompactionReport in
            guard !queue.isClosed else { throw EventGraphError(.closed, "the store is closed") }
            if let failure = queue.failure { throw failure }
            let snapshot = state.withLock { $0 }
            let input = try checkpointInput(of: snapshot)
            try backend.rewrite(schema: model.schema, checkpoint: input) { handles, generation in
                // The new file holds only the blobs of live objects: forget the others, whose old offsets would
                // point into the new file.
                var fresh: [BlobKey: UInt64] = [:]
                fresh.reserveCapacity(handles.count)
                for (blob, handle) in zip(input.blobs, handles) {
                    fresh[BlobKey(transactionID: blob.reference.transactionID, index: blob.reference.index)] = handle
                }
                state.withLock { state in
                    state.blobHandles = fresh
                    state.blobGeneration = generation
                }
            }
            return CompactionReport(
                lastTransactionID: input.begin.lastTransactionID, objectCount: Int(input.begin.objectCount),
                blobCount: input.blobs.count, stateDigest: StateDigest(bytes: input.end.stateDigest)!)
        }
    }

    /// The checkpoint frames for a state, with the bytes of every external value the live objects reference.
    func checkpointInput(of snapshot: StoreState) throws(EventGraphError) -> CheckpointInput {
        let (begin, chunks) = checkpointRecords(of: snapshot)
        var blobs: [(reference: BlobReference, bytes: [UInt8])] = []
        for chunk in chunks {
            for record in chunk.records {
                for case .attribute(.blob(let reference)) in record.properties.map(\.value) {
                    guard let bytes = try readBlob(reference) else {
                        throw EventGraphError(
                            .log,
                            "the live state references external value \(reference.index) of transaction "
                                + "\(reference.transactionID), which the log lacks")
                    }
                    blobs.append((reference, bytes))
                }
            }
        }
        let digest = LogGraph(schema: model.schema, begin: begin, chunks: chunks).digest()
        return CheckpointInput(
            begin: begin, chunks: chunks,
            end: CheckpointEnd(objectCount: begin.objectCount, stateDigest: digest.bytes), blobs: blobs)
    }

    /// The checkpoint records of a state: every live object with its non-default persistent values, in chunks
    /// that fit a frame.
    func checkpointRecords(of snapshot: StoreState) -> (CheckpointBegin, [CheckpointChunk]) {
        var chunks: [CheckpointChunk] = []
        var records: [ObjectRecord] = []
        var recordBytes = 0
        for (entityIndex, table) in snapshot.tables.enumerated() {
            let entity = model.entities[entityIndex]
            for row in table.liveRows {
                var properties: [PropertyChange] = []
                for (index, value) in row.values.enumerated()
                where entity.isPersistentProperty[index] && value != entity.defaultValues[index] {
                    properties.append(PropertyChange(propertyIndex: UInt32(index), value: value))
                    recordBytes += Self.estimatedByteCount(value)
                }
                records.append(ObjectRecord(object: row.reference, properties: properties))
                recordBytes += 16
                if records.count >= Self.checkpointChunkObjectCount || recordBytes >= LogLimits.maxFrameRawByteCount / 4
                {
                    chunks.append(CheckpointChunk(records: records))
                    records.removeAll(keepingCapacity: true)
                    recordBytes = 0
                }
            }
        }
        if !records.isEmpty { chunks.append(CheckpointChunk(records: records)) }
        let begin = CheckpointBegin(
            lastTransactionID: snapshot.lastTransactionID,
            lastCommitTimeMicroseconds: snapshot.lastCommitTimeMicroseconds, nextKey: keyWatermark,
            objectCount: UInt64(snapshot.objectCount))
        return (begin, chunks)
    }

    private static func estimatedByteCount(_ value: PropertyValue) -> Int {
        switch value {
        case .attribute(.string(let s)), .attribute(.url(let s)), .attribute(.decimal(let s)): 8 + s.utf8.count
        case .attribute(.binary(let b)), .attribute(.transformable(let b)): 8 + b.count
        case .attribute: 16
        case .toOne: 16
        case .toMany(let references): 8 + 16 * references.count
        }
    }
}
