import LogFormat

/// Where a store's log lives: ``FileBackend`` wraps LogFormat's writer and reader, on a file on disk or in a
/// ``MemoryVolume`` (an in-memory store). Every method but ``waitUntilDurable(_:)``, ``readBlob(_:at:generation:)``
/// and ``prepareRewrite(schema:checkpoint:from:)`` is called with the store's commit lock held or during open.
///
/// A blob handle is valid in one *generation* of the log: a rewrite (compaction) moves every blob, so it starts a
/// new generation, and a handle of an older one must never be used as an offset into the new file.
protocol LogBackend: Sendable {
    /// The store's identity, from the log header.
    var storeUUID: LogUUID { get }
    /// Whether appends are refused.
    var isReadOnly: Bool { get }
    /// Delivers every committed unit of the log in order; with `lastTransactionID`, none after the first
    /// transaction that follows it (an *as of* view's replay).
    func replay(
        through lastTransactionID: UInt64?, _ body: (ReplayRecord) throws(EventGraphError) -> Void
    ) throws(EventGraphError)
    /// Appends the model.
    func append(schema: SchemaPayload) throws(EventGraphError)
    /// Queues one transaction (its blobs, then its changeset) in the log without waiting for I/O; called with the
    /// store's commit lock held so transactions reach the log in ID order. Returns a handle for each blob.
    ///
    /// - Parameter encodedPayload: the payload's frames, compressed and checksummed ahead by the threads of a
    ///   ``SharedFrameEncoding`` this backend made (``sharedFrameEncoding(forTransaction:)``); the bytes queued are
    ///   the same as without them.
    func enqueueTransaction(
        id: UInt64, payload: [UInt8], blobs: [[UInt8]], encodedPayload: EncodedTransactionFrames?
    ) throws(EventGraphError) -> QueuedTransaction
    /// Something to encode the payload frames of transaction `id` with, on the threads that help, before it is
    /// queued; `nil` when this log does not take frames encoded ahead (one open read-only). Called with the commit
    /// lock held.
    func sharedFrameEncoding(forTransaction id: UInt64) -> SharedFrameEncoding?
    /// Returns when a queued transaction (and every one queued before it) is durable; called without the commit
    /// lock, so that concurrent saves share one sync. A failure here poisons the log.
    func waitUntilDurable(_ transaction: QueuedTransaction) throws(EventGraphError)
    /// Waits until everything appended so far is synced, whatever the durability mode (a named counter's
    /// reservation must survive a crash before its value is handed out).
    func sync() throws(EventGraphError)
    /// Reads the bytes of the blob `key` by the handle that replay, append or rewrite returned in `generation`;
    /// `nil` when the log was rewritten since (look the handle up again). Throws when the frame at the handle is
    /// not that blob.
    func readBlob(_ key: BlobKey, at handle: UInt64, generation: UInt64) throws(EventGraphError) -> [UInt8]?
    /// The log's end now, where a rewrite's tail will start; taken with the store's queue drained, at the instant
    /// the checkpoint's state is taken.
    func rewriteAnchor() throws(EventGraphError) -> RewriteAnchor
    /// The first phase of replacing the log by a compacted one, called with no lock held while saves go on: writes
    /// the schema and a checkpoint of the state at `anchor` into a new file, synced and verified, not yet in place.
    /// `cancellation` stops it between stages and between chunks (the store's close).
    func prepareRewrite(
        schema: SchemaPayload, checkpoint: CheckpointInput, from anchor: RewriteAnchor,
        cancellation: RewriteCancellation
    ) throws(EventGraphError) -> PreparedRewrite
    /// The second phase, called with the store's queue drained: copies the transactions committed since the anchor
    /// into the new file and swaps it in. Calls `install` with the handle of every blob the new file holds (the
    /// checkpoint's and the copied transactions') and their generation, at the moment the new file replaces the
    /// old one for readers, so that no reader can pair an old handle with the new file.
    /// `cancellation` stops it before the tail copy and before the rename.
    func finishRewrite(
        _ prepared: PreparedRewrite, keepingPreviousAt previousPath: String?, cancellation: RewriteCancellation,
        install: (_ handles: [BlobKey: UInt64], _ generation: UInt64) -> Void
    ) throws(EventGraphError)
    /// A read-only backend for an *as of* view: it keeps reading the log as it is now, even after a rewrite.
    func readOnlyView() -> any LogBackend
    /// Closes the log (a file backend appends a seal and releases the lock).
    func close() throws(EventGraphError)
    /// What opening or replaying the log left out of the file (a torn tail, or damage a read-only view stops at).
    var recoveryReport: StoreRecoveryReport? { get }
    /// What the last replay of the log said about saves across stores (see ``CrossStoreLedger``).
    var crossStoreLedger: CrossStoreLedger { get }
    /// The log's bytes after its last checkpoint (from the checkpoint's end frame; the whole log when it has none),
    /// queued transactions included: what an open replays besides the checkpoint. 0 for a read-only log.
    var tailByteCount: UInt64 { get }
    /// Returns when a queued transaction is written to the file, not necessarily synced (a save across stores
    /// writes every store's part, then syncs them all). A failure here poisons the log.
    func waitUntilWritten(_ transaction: QueuedTransaction) throws(EventGraphError)
    /// Refuses every later append, and the seal of a clean close: another store's part of a save across stores
    /// failed, so only an opener of all the stores may decide whether this log's part counts. With `transaction`
    /// (the last one queued), also tries to cut it off the file.
    func poison(because reason: String, discarding transaction: QueuedTransaction?)
    /// Whether the log's transaction `transactionID` is a part of the save across stores `id`: read from the file
    /// again (rare: only to decide a save at open); `nil` when the log no longer holds that transaction.
    func isPart(_ transactionID: UInt64, ofSave id: LogUUID) throws(EventGraphError) -> Bool?
    /// Cuts the log's last transaction off (a save across stores that did not commit everywhere).
    func discardLastTransaction(_ last: CrossStoreLedger.LastTransaction) throws(EventGraphError)
}

extension LogBackend {
    var recoveryReport: StoreRecoveryReport? { nil }

    /// Delivers every committed unit of the log in order.
    func replay(_ body: (ReplayRecord) throws(EventGraphError) -> Void) throws(EventGraphError) {
        try replay(through: nil, body)
    }
}

/// A transaction queued in a log, not yet known to be durable.
struct QueuedTransaction: Sendable {
    var transactionID: UInt64
    /// Where each of its blobs is, in order.
    var blobHandles: [UInt64]
    /// The file writer's ticket (`nil` for logs that are durable once queued).
    var appended: AppendedTransaction?
}

/// A committed unit delivered by ``LogBackend/replay(_:)``.
enum ReplayRecord {
    case schema(SchemaPayload)
    /// A transaction, its changeset decoded flat (see ``ReplayChangeset``).
    case transaction(ReplayChangeset, blobHandles: [UInt64])
    case checkpointBegin(CheckpointBegin)
    case checkpointChunk(CheckpointChunk)
    /// An externally stored value that belongs to the current checkpoint, by its logical reference.
    case checkpointBlob(transactionID: UInt64, index: UInt32, handle: UInt64)
    /// Where the current checkpoint's entity chunks are (format 1.3), and the file to read them from.
    case checkpointDirectory(CheckpointDirectory, source: LogReader)
    case checkpointEnd(CheckpointEnd)
}

/// The checkpoint a compaction writes.
struct CheckpointInput {
    var begin: CheckpointBegin
    var chunks: [CheckpointChunk]
    /// Chunks of one entity's objects each (format 1.3), written as entity chunks with a directory: encoded by the
    /// writer as it writes them, a few ahead of the chunk being written (see ``EntityChunkSource``).
    var entityChunks = EntityChunkSource()
    /// How many of ``entityChunks`` are the last checkpoint's, copied as stored.
    var copiedEntityChunkCount = 0
    /// The stored indexes of the entities written as entity chunks (format 1.4), in the directory's order: built
    /// beside the entity chunks (their chunks made as they are encoded), and waited for when the writer comes to
    /// them. A compaction's input hands them over once (a second call gets none), so that the writer can let them go
    /// as soon as they are written.
    var indexChunks: @Sendable () -> [BuiltCheckpointIndex] = { [] }
    /// How many index chunks were copied from the last checkpoint as stored, once ``indexChunks`` has given them.
    var copiedIndexChunkCount: @Sendable () -> Int = { 0 }
    /// The live state's digest, which the checkpoint-end frame carries: computed beside the rewrite, which asks
    /// for it (``end()``) only once every chunk is written.
    var digest: BackgroundDigest
    /// The bytes of every externally stored value the checkpoint references, with its logical reference.
    var blobs: [(reference: BlobReference, bytes: [UInt8])]
    /// Whether the new file is also replayed from its bytes and its state digest compared with the live state's
    /// (`egctl compact`); otherwise it is verified by re-reading every frame's checksums and the checkpoint's
    /// structure, and the end frame carries the digest computed from the live state (`Docs/FileFormat-Checkpoints.md`
    /// §8).
    var verifiesByReplay = false

    /// The checkpoint-end frame's payload; waits for the digest.
    func end() throws(EventGraphError) -> CheckpointEnd {
        CheckpointEnd(objectCount: begin.objectCount, stateDigest: try digest.value().checkpointBytes)
    }
}

/// The entity chunks of a checkpoint, each encoded (or read as stored, when unchanged since the last checkpoint)
/// when the writer asks for it (on any thread), so that a checkpoint's chunks are never all held at once.
struct EntityChunkSource: Sendable {
    /// How many there are.
    var count = 0
    /// Chunk `index` (0 ..< ``count``), in the file's order: encoded now (into an array of the rewrite's pool), or
    /// the old checkpoint's stored frame.
    var content: @Sendable (_ index: Int, _ arrays: ByteArrayPool) throws(LogFormatError) -> EntityChunkContent = {
        index, _ in preconditionFailure("no entity chunk \(index) in an empty source")
    }
}

/// The logical identity of a blob: the transaction that wrote it and its position there.
struct BlobKey: Hashable, Sendable {
    var transactionID: UInt64
    var index: UInt32
}
