/// The payload of one checkpoint-entity-chunk frame (format 1.3), encoded, with what the checkpoint's directory
/// lists about it: a writer that encodes chunks from its own layout (``CheckpointChunkEncoder``) hands these to
/// ``CheckpointSink/appendEntityChunks(count:content:)`` without building ``CheckpointChunk``s.
package struct EntityChunkPayload: Sendable {
    /// The entity whose objects the chunk holds (all of them of this store).
    package var entityIndex: UInt32
    /// How many records the chunk holds: 1 ... ``LogLimits/maxEntityChunkObjectCount``.
    package var objectCount: Int
    /// The smallest and the largest key of its objects.
    package var minKey: UInt64
    package var maxKey: UInt64
    /// The encoded ``CheckpointChunk`` payload.
    package var bytes: [UInt8]

    /// Describes an encoded chunk.
    package init(entityIndex: UInt32, objectCount: Int, minKey: UInt64, maxKey: UInt64, bytes: [UInt8]) {
        self.entityIndex = entityIndex
        self.objectCount = objectCount
        self.minKey = minKey
        self.maxKey = maxKey
        self.bytes = bytes
    }

    /// Encodes a chunk of records.
    ///
    /// - Precondition: 1 ... ``LogLimits/maxEntityChunkObjectCount`` records, all of one entity of this store.
    /// - Throws: what ``CheckpointChunk/encoded()`` throws.
    package init(_ chunk: CheckpointChunk) throws(LogFormatError) {
        let records = chunk.records
        precondition(
            !records.isEmpty && records.count <= LogLimits.maxEntityChunkObjectCount,
            "an entity chunk holds 1 to \(LogLimits.maxEntityChunkObjectCount) objects, not \(records.count)")
        let entityIndex = records[0].object.entityIndex
        precondition(
            records.allSatisfy { $0.object.entityIndex == entityIndex && $0.object.storeIndex == 0 },
            "an entity chunk holds objects of one entity of its own store")
        var minKey = UInt64.max
        var maxKey = UInt64.min
        for record in records {
            minKey = min(minKey, record.object.key)
            maxKey = max(maxKey, record.object.key)
        }
        self.init(
            entityIndex: entityIndex, objectCount: records.count, minKey: minKey, maxKey: maxKey,
            bytes: try encode { try chunk.encoded() })
    }
}
