/// The payload of a ``FrameType/checkpointBegin`` frame: what the checkpoint that follows represents.
public struct CheckpointBegin: Hashable, Sendable {
    /// The last transaction whose effects the checkpoint contains; the tail after it continues from here + 1.
    public var lastTransactionID: UInt64
    /// The commit time (µs since 1970) of that transaction.
    public var lastCommitTimeMicroseconds: Int64
    /// The next object key the store will allocate.
    public var nextKey: UInt64
    /// How many objects the checkpoint's chunks hold.
    public var objectCount: UInt64

    /// Creates the payload.
    public init(lastTransactionID: UInt64, lastCommitTimeMicroseconds: Int64, nextKey: UInt64, objectCount: UInt64) {
        self.lastTransactionID = lastTransactionID
        self.lastCommitTimeMicroseconds = lastCommitTimeMicroseconds
        self.nextKey = nextKey
        self.objectCount = objectCount
    }
}

/// One live object in a checkpoint: its identity and every persistent property value.
public struct ObjectRecord: Hashable, Sendable {
    /// The object's identity.
    public var object: ObjectReference
    /// Its persistent property values (defaults may be omitted).
    public var properties: [PropertyChange]

    /// Creates a record.
    public init(object: ObjectReference, properties: [PropertyChange]) {
        self.object = object
        self.properties = properties
    }
}

/// The payload of a ``FrameType/checkpointChunk`` frame: a batch of live objects.
public struct CheckpointChunk: Hashable, Sendable {
    /// Stores referenced by ``ObjectReference/storeIndex`` values greater than 0 in this chunk.
    public var foreignStores: [LogUUID]
    /// The live objects of this chunk.
    public var records: [ObjectRecord]

    /// Creates a chunk.
    public init(foreignStores: [LogUUID] = [], records: [ObjectRecord]) {
        self.foreignStores = foreignStores
        self.records = records
    }
}

/// The payload of a ``FrameType/checkpointEnd`` frame.
public struct CheckpointEnd: Hashable, Sendable {
    /// Number of objects in all chunks (must equal ``CheckpointBegin/objectCount``).
    public var objectCount: UInt64
    /// A digest of the live state computed by the object layer (compared after a rewrite).
    public var stateDigest: [UInt8]

    /// Creates the payload.
    public init(objectCount: UInt64, stateDigest: [UInt8]) {
        self.objectCount = objectCount
        self.stateDigest = stateDigest
    }
}
