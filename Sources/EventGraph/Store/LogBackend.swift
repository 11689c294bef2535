import LogFormat

/// Where a store's log lives. The file backend wraps LogFormat's writer and reader; the memory backend serves
/// tests that need no file. Every method is called with the store's commit lock held or during open.
protocol LogBackend: Sendable {
    /// The store's identity, from the log header.
    var storeUUID: LogUUID { get }
    /// Whether appends are refused.
    var isReadOnly: Bool { get }
    /// Delivers every committed unit of the log in order.
    func replay(_ body: (ReplayRecord) throws(EventGraphError) -> Void) throws(EventGraphError)
    /// Appends the model.
    func append(schema: SchemaPayload) throws(EventGraphError)
    /// Appends one transaction (its blobs, then its changeset) and returns when it is durable; returns a handle
    /// for each blob, in order.
    func appendTransaction(id: UInt64, payload: [UInt8], blobs: [[UInt8]]) throws(EventGraphError) -> [UInt64]
    /// Reads the bytes of a blob by the handle that replay or append returned.
    func readBlob(at handle: UInt64) throws(EventGraphError) -> [UInt8]
    /// Replaces the log by a compacted one: the schema, then a checkpoint of the live state, then the
    /// transactions committed after `input.begin.lastTransactionID`. Returns blob handles for the checkpoint's
    /// blobs, in order.
    func rewrite(schema: SchemaPayload, checkpoint: CheckpointInput) throws(EventGraphError) -> [UInt64]
    /// Closes the log (a file backend appends a seal and releases the lock).
    func close() throws(EventGraphError)
}

/// A committed unit delivered by ``LogBackend/replay(_:)``.
enum ReplayRecord {
    case schema(SchemaPayload)
    case transaction(Changeset, blobHandles: [UInt64])
    case checkpointBegin(CheckpointBegin)
    case checkpointChunk(CheckpointChunk)
    /// An externally stored value that belongs to the current checkpoint, by its logical reference.
    case checkpointBlob(transactionID: UInt64, index: UInt32, handle: UInt64)
    case checkpointEnd(CheckpointEnd)
}

/// The checkpoint a compaction writes.
struct CheckpointInput {
    var begin: CheckpointBegin
    var chunks: [CheckpointChunk]
    var end: CheckpointEnd
    /// The bytes of every externally stored value the checkpoint references, with its logical reference.
    var blobs: [(reference: BlobReference, bytes: [UInt8])]
}

/// The logical identity of a blob: the transaction that wrote it and its position there.
struct BlobKey: Hashable, Sendable {
    var transactionID: UInt64
    var index: UInt32
}
