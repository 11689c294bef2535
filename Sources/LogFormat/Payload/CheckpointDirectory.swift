/// The payload of a ``FrameType/checkpointDirectory`` frame (format 1.3): where a checkpoint's entity chunks are,
/// so that a reader can open the store without reading them and load each one the first time it is needed
/// (`Docs/FileFormat-Checkpoints.md`).
package struct CheckpointDirectory: Hashable, Sendable {
    /// One entry per entity that has entity chunks, in increasing entity index.
    package var entities: [EntityChunks]

    /// Creates the payload.
    package init(entities: [EntityChunks]) {
        self.entities = entities
    }

    /// Every chunk entry in file order (entity by entity, each entity's chunks in slot order).
    package var allChunks: [EntityChunkEntry] { entities.flatMap(\.chunks) }
}

/// The entity chunks of one entity, in the order of the entity's slots.
package struct EntityChunks: Hashable, Sendable {
    /// The entity's index in the schema.
    package var entityIndex: UInt32
    /// Its chunks; chunk *i* holds the objects of slots *i* × ``LogLimits/maxEntityChunkObjectCount`` onwards.
    package var chunks: [EntityChunkEntry]

    /// Creates an entry.
    package init(entityIndex: UInt32, chunks: [EntityChunkEntry]) {
        self.entityIndex = entityIndex
        self.chunks = chunks
    }
}

/// Where one entity chunk is and what it holds, as far as a reader needs before loading it.
package struct EntityChunkEntry: Hashable, Sendable {
    /// The byte offset of the chunk's checkpoint-entity-chunk frame.
    package var byteOffset: UInt64
    /// How many objects (records) the chunk holds: 1 ... ``LogLimits/maxEntityChunkObjectCount``.
    package var objectCount: UInt32
    /// The smallest and the largest key of its objects.
    package var minKey: UInt64
    package var maxKey: UInt64

    /// Creates an entry.
    package init(byteOffset: UInt64, objectCount: UInt32, minKey: UInt64, maxKey: UInt64) {
        self.byteOffset = byteOffset
        self.objectCount = objectCount
        self.minKey = minKey
        self.maxKey = maxKey
    }
}
