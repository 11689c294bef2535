package import LogFormat

extension LogGraph {
    /// The live state as checkpoint chunks of at most `recordsPerChunk` objects, in (entity, key) order, every
    /// recorded persistent property explicit.
    package func checkpointChunks(recordsPerChunk: Int = 2048) -> [CheckpointChunk] {
        var chunks: [CheckpointChunk] = []
        forEachCheckpointChunk(recordsPerChunk: recordsPerChunk) { chunks.append($0) }
        return chunks
    }

    /// Calls `body` with each checkpoint chunk in turn, so that a large store is never held twice in memory.
    package func forEachCheckpointChunk(
        recordsPerChunk: Int = 2048, _ body: (CheckpointChunk) throws -> Void
    ) rethrows {
        let ordered = objects.keys.sorted()
        var index = 0
        while index < ordered.count {
            let slice = ordered[index..<min(index + recordsPerChunk, ordered.count)]
            let records = slice.map { object in
                let values = objects[object]!
                var properties: [PropertyChange] = []
                for (position, value) in values.enumerated() {
                    if let schema = catalog?.property(UInt32(position), ofEntity: object.entityIndex),
                        !SchemaCatalog.isPersistent(schema)
                    {
                        continue
                    }
                    if let value {
                        properties.append(PropertyChange(propertyIndex: UInt32(position), value: value.propertyValue))
                    }
                }
                return ObjectRecord(object: object, properties: properties)
            }
            try body(CheckpointChunk(foreignStores: foreignStores, records: Array(records)))
            index += recordsPerChunk
        }
    }

    /// The blobs that live objects reference, with their current locations.
    package func referencedBlobs() -> [(BlobReference, BlobLocation)] {
        var result: [(BlobReference, BlobLocation)] = []
        var seen: Set<BlobKey> = []
        for values in objects.values {
            for case .value(.attribute(.blob(let reference)))? in values {
                let key = BlobKey(transactionID: reference.transactionID, index: reference.index)
                if seen.insert(key).inserted, let location = blobLocations[key] { result.append((reference, location)) }
            }
        }
        return result.sorted { ($0.0.transactionID, $0.0.index) < ($1.0.transactionID, $1.0.index) }
    }
}
