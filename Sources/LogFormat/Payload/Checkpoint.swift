/// The payload of a ``FrameType/checkpointBegin`` frame: what the checkpoint that follows represents.
package struct CheckpointBegin: Hashable, Sendable {
    /// The last transaction whose effects the checkpoint contains; the tail after it continues from here + 1.
    package var lastTransactionID: UInt64
    /// The commit time (µs since 1970) of that transaction.
    package var lastCommitTimeMicroseconds: Int64
    /// The next object key the store will allocate.
    package var nextKey: UInt64
    /// How many objects the checkpoint's chunks hold.
    package var objectCount: UInt64
    /// The store's named counters (payload version 2; empty in every version-1 payload).
    package var sequenceReservations: [SequenceReservation] = []

    /// Creates the payload.
    package init(lastTransactionID: UInt64, lastCommitTimeMicroseconds: Int64, nextKey: UInt64, objectCount: UInt64) {
        self.lastTransactionID = lastTransactionID
        self.lastCommitTimeMicroseconds = lastCommitTimeMicroseconds
        self.nextKey = nextKey
        self.objectCount = objectCount
    }
}

/// One live object in a checkpoint: its identity and every persistent property value.
package struct ObjectRecord: Hashable, Sendable {
    /// The object's identity.
    package var object: ObjectReference
    /// Its persistent property values (defaults may be omitted).
    package var properties: [PropertyChange]

    /// Creates a record.
    package init(object: ObjectReference, properties: [PropertyChange]) {
        self.object = object
        self.properties = properties
    }
}

/// The payload of a ``FrameType/checkpointChunk`` frame: a batch of live objects.
package struct CheckpointChunk: Hashable, Sendable {
    /// Stores referenced by ``ObjectReference/storeIndex`` values greater than 0 in this chunk.
    package var foreignStores: [LogUUID]
    /// The live objects of this chunk.
    package var records: [ObjectRecord]

    /// Creates a chunk.
    package init(foreignStores: [LogUUID] = [], records: [ObjectRecord]) {
        self.foreignStores = foreignStores
        self.records = records
    }
}

/// The payload of a ``FrameType/checkpointEnd`` frame.
package struct CheckpointEnd: Hashable, Sendable {
    /// Number of objects in all chunks (must equal ``CheckpointBegin/objectCount``).
    package var objectCount: UInt64
    /// A digest of the live state computed by the object layer (compared after a rewrite).
    package var stateDigest: [UInt8]

    /// Creates the payload.
    package init(objectCount: UInt64, stateDigest: [UInt8]) {
        self.objectCount = objectCount
        self.stateDigest = stateDigest
    }
}
