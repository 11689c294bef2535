import LogFormat

extension StoreState {
    /// The largest number of objects in one checkpoint chunk (chunks are also split to fit a frame).
    static let checkpointChunkObjectCount = 2048

    /// The one checkpoint writer: every live object with its persistent values that differ from the model's
    /// defaults (a checkpoint record leaves defaults out, as an insert does), in chunks that fit a frame, and the
    /// begin record. The library's compaction and `egctl compact` both write what this returns.
    ///
    /// - Parameter nextKey: the next key the store hands out (the library's key counter may be ahead of the log).
    func checkpointRecords(
        model: ObjectModel, nextKey: UInt64, recordsPerChunk: Int = checkpointChunkObjectCount
    ) -> (CheckpointBegin, [CheckpointChunk]) {
        var chunks: [CheckpointChunk] = []
        var records: [ObjectRecord] = []
        var recordBytes = 0
        for entityIndex in model.entities.indices {
            let entity = model.entities[entityIndex]
            forEachRow(ofEntity: entityIndex) { row in
                var properties: [PropertyChange] = []
                for (index, value) in row.values.enumerated()
                where entity.isPersistentProperty[index] && value != entity.defaultValues[index] {
                    properties.append(PropertyChange(propertyIndex: UInt32(index), value: value))
                    recordBytes += Self.estimatedByteCount(value)
                }
                records.append(ObjectRecord(object: row.reference, properties: properties))
                recordBytes += 16
                if records.count >= recordsPerChunk || recordBytes >= LogLimits.maxFrameRawByteCount / 4 {
                    chunks.append(CheckpointChunk(foreignStores: foreignStores, records: records))
                    records.removeAll(keepingCapacity: true)
                    recordBytes = 0
                }
            }
        }
        if !records.isEmpty { chunks.append(CheckpointChunk(foreignStores: foreignStores, records: records)) }
        var begin = CheckpointBegin(
            lastTransactionID: lastTransactionID, lastCommitTimeMicroseconds: lastCommitTimeMicroseconds,
            nextKey: nextKey, objectCount: UInt64(objectCount))
        begin.sequenceReservations = sequenceReservations
        return (begin, chunks)
    }

    /// The external values the live objects reference, each once, in (transaction, index) order.
    func referencedBlobs(model: ObjectModel) -> [BlobReference] {
        var seen: Set<BlobKey> = []
        var blobs: [BlobReference] = []
        // Every attribute is looked at, not only those the model stores externally: the log is the authority.
        for entityIndex in model.entities.indices {
            forEachRow(ofEntity: entityIndex) { row in
                for case .attribute(.blob(let reference)) in row.values
                where seen.insert(BlobKey(transactionID: reference.transactionID, index: reference.index)).inserted {
                    blobs.append(reference)
                }
            }
        }
        return blobs.sorted { ($0.transactionID, $0.index) < ($1.transactionID, $1.index) }
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
