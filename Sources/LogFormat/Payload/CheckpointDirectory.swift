/// The payload of a ``FrameType/checkpointDirectory`` frame (format 1.3): where a checkpoint's entity chunks are,
/// so that a reader can open the store without reading them and load each one the first time it is needed
/// (`Docs/FileFormat-Checkpoints.md`).
package struct CheckpointDirectory: Hashable, Sendable {
    /// One entry per entity that has entity chunks, in increasing entity index.
    package var entities: [EntityChunks]
    /// The stored indexes (format 1.4, payload version 2): each index of each entity at most once.
    package var indexes: [IndexChunks]

    /// Creates the payload.
    package init(entities: [EntityChunks], indexes: [IndexChunks] = []) {
        self.entities = entities
        self.indexes = indexes
    }

    /// Every chunk entry in file order (entity by entity, each entity's chunks in slot order).
    package var allChunks: [EntityChunkEntry] { entities.flatMap(\.chunks) }

    /// Every index chunk's byte offset in file order (index by index, each index's chunks in order).
    package var allIndexChunkOffsets: [UInt64] { indexes.flatMap { $0.chunks.map(\.byteOffset) } }
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

/// What a stored index covers (format 1.4).
package enum CheckpointIndexKind: UInt8, Hashable, Sendable {
    /// The entries of a uniqueness constraint: the holder of each value tuple.
    case unique = 0
    /// An ordinary attribute index: every object's value of one attribute.
    case attribute = 1
}

/// The index chunks of one index of one entity, in the index's order (format 1.4).
package struct IndexChunks: Hashable, Sendable {
    package var kind: CheckpointIndexKind
    /// The entity whose objects the entries hold.
    package var entityIndex: UInt32
    /// For ``CheckpointIndexKind/unique``: the entity that declares the constraint (the entity itself or an
    /// ancestor); for ``CheckpointIndexKind/attribute``: `entityIndex`.
    package var ownerEntityIndex: UInt32
    /// For ``CheckpointIndexKind/unique``: the constraint's position among its owner's constraints; for
    /// ``CheckpointIndexKind/attribute``: the indexed property's index.
    package var ordinal: UInt32
    /// The number of values in each entry: 1 ... ``LogLimits/maxIndexArity`` (1 for an attribute index).
    package var arity: UInt32
    /// The chunks in the index's order; each holds at least one entry.
    package var chunks: [IndexChunkEntry]

    /// Creates an entry.
    package init(
        kind: CheckpointIndexKind, entityIndex: UInt32, ownerEntityIndex: UInt32, ordinal: UInt32, arity: UInt32,
        chunks: [IndexChunkEntry]
    ) {
        self.kind = kind
        self.entityIndex = entityIndex
        self.ownerEntityIndex = ownerEntityIndex
        self.ordinal = ordinal
        self.arity = arity
        self.chunks = chunks
    }
}

/// Where one index chunk is, how many entries it holds and the values of its first and last entry (a reader picks
/// the chunks that may hold a value without reading the others).
package struct IndexChunkEntry: Hashable, Sendable {
    /// The byte offset of the chunk's checkpoint-index-chunk frame.
    package var byteOffset: UInt64
    /// How many entries it holds: 1 ... ``LogLimits/maxIndexChunkEntryCount``.
    package var entryCount: UInt32
    /// The values of its first entry and of its last entry (``IndexChunks/arity`` each).
    package var firstValues: [AttributeValue]
    package var lastValues: [AttributeValue]

    /// Creates an entry.
    package init(byteOffset: UInt64, entryCount: UInt32, firstValues: [AttributeValue], lastValues: [AttributeValue]) {
        self.byteOffset = byteOffset
        self.entryCount = entryCount
        self.firstValues = firstValues
        self.lastValues = lastValues
    }
}
