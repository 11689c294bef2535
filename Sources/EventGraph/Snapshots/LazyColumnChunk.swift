import LogFormat
import Synchronization

/// One entity chunk of a checkpoint that stays on disk until something touches it, then is read, verified and
/// decoded: the box is shared by every version of the state that has not changed the chunk, and by the objects read
/// from it (``ChunkSlot``).
///
/// Its decoded form (the column chunk, and its keys sorted with their positions, so that a version finds a key in an
/// unchanged chunk without a key directory entry per object) is kept under the store's budget of decoded chunks
/// (``DecodedChunkCache``): evicted, it is read, verified and decoded again on the next touch, from the file the
/// store opened (``CheckpointChunkSource`` reads through the descriptor it opened, so a compaction that renamed a
/// new file over the path since does not matter). The checkpoint's bytes do not change, so every decode gives the
/// same values.
///
/// A read that fails (`pread` reports an I/O error, ``EventGraphError/isFailedRead``) is tried again, up to
/// ``readRetryCount`` more times, and the error is not kept: the next touch reads again. Damage (bytes that fail their
/// checks, found on the first touch or on a touch after an eviction) is kept, and every later load throws it. A caller
/// that can throw throws either error; a property getter cannot, and ends the process with a message naming the file,
/// the entity, the chunk, its byte offset and the property (``columns(readingProperty:)``), as Core Data does when a
/// fault cannot be fulfilled: a value read as null or an object read as absent would be a silent wrong answer.
///
/// Locks: the box's `LockedValue` is held while it decodes (so threads touching one chunk at once decode it once) and,
/// otherwise, only to take or drop its decoded form; no value is read under it. Never taken under the cache's lock
/// or the store's, nor the other way round.
final class LazyColumnChunk: Sendable {
    /// How many more times a read that failed with an I/O error is tried before the error is given to the caller
    /// (``CheckpointChunkRead/retryCount``).
    static let readRetryCount = CheckpointChunkRead.retryCount

    let entry: EntityChunkEntry
    let chunkIndex: Int
    private let decoder: CheckpointChunkDecoder
    private let state = LockedValue(State())
    /// Set by every read, cleared by the cache's clock when it passes (a second chance before eviction).
    private let isReferenced = Atomic<Bool>(false)
    /// How many times ``columns(readingProperty:)`` took the decoded columns (a context's property reads take them
    /// once per run of reads of the chunk's objects, see ``CheckpointColumnsCache``), for tests.
    private let columnsTakenCount = Atomic<Int>(0)

    private struct State: Sendable {
        /// The decoded chunk while the cache keeps it.
        var decoded: Decoded?
        /// Why the chunk cannot be used, once a read found it damaged (kept: the bytes will not heal; a read that
        /// failed is not kept).
        var failure: EventGraphError?
        /// How many times it has been read from the file (decoded, or listed: ``slotListing()``; each try of a read
        /// that failed counts).
        var readCount = 0
        /// How many times its values have been decoded.
        var decodeCount = 0
        /// How many commits or replayed transactions hold it decoded between loading it and changing it
        /// (``ChunkPins``); the cache's eviction waits for the last of them.
        var pinCount = 0
        /// Whether the cache evicted it while it was pinned: its decoded form is dropped when the last pin is.
        var isEvictionDeferred = false
    }

    /// A decoded chunk and its keys in ascending order with their positions.
    private struct Decoded: Sendable {
        var chunk: ColumnChunk
        var sortedKeys: [(key: UInt64, position: Int)]
    }

    init(entry: EntityChunkEntry, chunkIndex: Int, decoder: CheckpointChunkDecoder) {
        self.entry = entry
        self.chunkIndex = chunkIndex
        self.decoder = decoder
    }

    /// The number of objects the directory says it holds (all live: a checkpoint holds live objects only).
    var objectCount: Int { Int(entry.objectCount) }

    /// Whether its directory entry allows it to hold `key`.
    @inline(__always)
    func mayHold(_ key: UInt64) -> Bool { key >= entry.minKey && key <= entry.maxKey }

    /// Whether it has been read (successfully or not) at least once.
    var isLoaded: Bool { state.withLock { $0.readCount > 0 } }

    /// Whether its decoded form is in memory now (not evicted), for tests.
    var isDecoded: Bool { state.withLock { $0.decoded != nil } }

    /// How many times it has been read from the file (more than once after evictions or listings), for tests.
    var readCount: Int { state.withLock { $0.readCount } }

    /// How many times its values have been decoded (more than once after evictions), for tests.
    var decodeCount: Int { state.withLock { $0.decodeCount } }

    /// How many pins hold its decoded form now (``pin()``), for tests.
    var pinCount: Int { state.withLock { $0.pinCount } }

    /// How many times ``columns(readingProperty:)`` took the decoded columns, for tests.
    var columnsTakenCountForTests: Int { columnsTakenCount.load(ordering: .relaxed) }

    /// The chunk's slots for a scan that hands them out to be read through this box later (``ChunkSlot``): the
    /// decoded chunk when it is in memory; otherwise, when the store's budget of decoded chunks has no room for
    /// another one, a listing of its slots read from the file without its values (nothing kept, nothing evicted):
    /// decoding it now would evict a chunk, or this one before its objects are read. With room, it is decoded.
    ///
    /// - Throws: the chunk's error, as ``load()`` (found by the listing too: damage is kept, a read that failed is tried
    ///   again up to ``readRetryCount`` times and not kept).
    func slotListing() throws(EventGraphError) -> ColumnChunk {
        let cache = decoder.source.cache
        if cache.isUnbounded || cache.hasRoomForAnotherChunk { return try load() }
        let known = state.withLock { state -> Result<ColumnChunk, EventGraphError>? in
            if let decoded = state.decoded { return .success(decoded.chunk) }
            if let failure = state.failure { return .failure(failure) }
            return nil
        }
        if let known { return try known.get() }
        // As a decode (the same rule): a read that failed is tried again and not kept; damage is kept.
        let listed = CheckpointChunkRead.retryingFailedReads(eachTry: { state.withLock { $0.readCount += 1 } }) {
            () throws(EventGraphError) -> ColumnChunk in
            try decoder.columnChunk(entry, chunkIndex: chunkIndex, includesValues: false)
        }
        if case .failure(let error) = listed {
            state.withLock { if $0.failure == nil { CheckpointChunkRead.keep(error, in: &$0.failure) } }
        }
        return try listed.get()
    }

    /// The decoded chunk: read and decoded on the first call and again after an eviction (under the box's own lock,
    /// never the store's).
    ///
    /// - Throws: ``EventGraphError/Code/log`` naming the file, the entity, the chunk and its byte offset when the
    ///   chunk is damaged (the same error on every call once found) or its read failed ``readRetryCount`` + 1 times.
    func load() throws(EventGraphError) -> ColumnChunk {
        try withDecoded { $0.chunk }.get()
    }

    /// The chunk's columns, for a slot that reads the value of `property` (see ``ChunkSlot``; `nil`: every column,
    /// for a caller that reads them all).
    ///
    /// A property getter cannot throw: when the chunk cannot be read, this ends the process with
    /// ``unfulfilledReadMessage(_:property:)`` (Core Data's "could not fulfill a fault"), never returns no column.
    @inline(__always)
    func columns(readingProperty property: Int?) -> [Column] {
        columnsTakenCount.add(1, ordering: .relaxed)
        switch withDecoded({ $0.chunk.columns }) {
        case .success(let columns): return columns
        case .failure(let error): fatalError(unfulfilledReadMessage(error, property: property))
        }
    }

    /// What a read that cannot be fulfilled ends the process with: the chunk's error (which names the file, the
    /// entity, the chunk and its byte offset) and the property read.
    func unfulfilledReadMessage(_ error: EventGraphError, property: Int?) -> String {
        let names = decoder.propertyNames
        let what =
            switch property {
            case .some(let index) where index < names.count: "property \(names[index])"
            case .some(let index): "property #\(index)"
            case nil: "its properties"
            }
        return "EventGraph could not fulfill a read of \(what) of an object of entity \(decoder.entityName): "
            + error.message
    }

    /// The position of `key` in the chunk, if it holds it (loads the chunk).
    ///
    /// - Throws: the chunk's error when it cannot be loaded (never `nil` then: an object that exists must not
    ///   look deleted).
    func position(of key: UInt64) throws(EventGraphError) -> Int? {
        guard mayHold(key) else { return nil }
        return try withDecoded { decoded -> Int? in
            let keys = decoded.sortedKeys
            var low = 0
            var high = keys.count
            while low < high {
                let middle = (low + high) / 2
                if keys[middle].key < key { low = middle + 1 } else { high = middle }
            }
            return low < keys.count && keys[low].key == key ? keys[low].position : nil
        }.get()
    }

    /// Whether a checkpoint written now may copy this chunk as stored (``storedChunk()``) instead of encoding its
    /// objects: what it would encode is the same payload byte for byte. The chunk is unchanged (the caller asks of a
    /// version that still holds it as this box); the values it leaves out are those equal to the same defaults (the
    /// recorded schema's are the model's, for every persistent property); and no table of foreign stores is
    /// involved (the state's was empty when the chunk was read — so the chunk's own was, or it would not have
    /// loaded — and `foreignStores`, the new checkpoint's, is empty).
    func isCopyable(as entity: EntityDescription, foreignStores: [LogUUID]) -> Bool {
        let defaults = decoder.defaults
        guard foreignStores.isEmpty, decoder.foreignStores.isEmpty, defaults.count == entity.defaultValues.count
        else { return false }
        return defaults.indices.allSatisfy {
            !entity.isPersistentProperty[$0] || defaults[$0] == entity.defaultValues[$0]
        }
    }

    /// The chunk's frame as the checkpoint stores it, read again and verified (its checksums, its type and
    /// checkpoint), not decoded: what a rewrite copies when ``isCopyable(as:foreignStores:)``. Safe from any
    /// thread (`pread`).
    ///
    /// - Throws: ``LogFormatError/Code/damaged`` naming the file and the byte offset when the frame does not verify
    ///   (the bytes changed since the chunk was decoded): the rewrite stops rather than copy them.
    func storedChunk() throws(LogFormatError) -> StoredEntityChunk {
        try decoder.source.reader.storedEntityChunk(
            entry, entityIndex: UInt32(decoder.entityIndex),
            checkpointTransactionID: decoder.source.checkpointTransactionID)
    }

    /// The cache its decoded form is counted in, for tests.
    var cacheForTests: DecodedChunkCache { decoder.source.cache }

    /// The shape its entity's decodes reserve from (``DecodedChunkShape``), for tests.
    var shapeForTests: DecodedChunkShape { decoder.shape }

    /// Drops the decoded form (the cache's clock chose it); the next touch reads the chunk again. A pinned chunk
    /// keeps it until its last pin is dropped (``unpin()``); the cache has stopped counting it either way.
    func evict() {
        state.withLock { state in
            if state.pinCount > 0 {
                state.isEvictionDeferred = true
            } else {
                state.decoded = nil
            }
        }
    }

    /// Loads the chunk and keeps its decoded form until ``unpin()``, whatever the cache evicts meanwhile: a commit
    /// loads the chunks it changes (and finds their damage) before it is queued, and changes them when it is
    /// installed, after the log's sync — a read between the two must find them decoded, not read them again.
    ///
    /// - Throws: the chunk's error, as ``load()`` (nothing is pinned then).
    func pin() throws(EventGraphError) {
        // Pinned first: an eviction from here on (another thread's admission, or this decode's own) is deferred.
        state.withLock { $0.pinCount += 1 }
        do {
            try withDecoded { _ in () }.get()
        } catch {
            unpin()
            throw error
        }
    }

    /// Drops one pin (``pin()``); the last one carries out an eviction the cache decided meanwhile.
    func unpin() {
        state.withLock { state in
            state.pinCount -= 1
            if state.pinCount == 0 && state.isEvictionDeferred {
                state.isEvictionDeferred = false
                state.decoded = nil
            }
        }
    }

    /// Clears the referenced bit; returns whether it was set (the cache's clock passing).
    func takeReferencedBit() -> Bool {
        isReferenced.exchange(false, ordering: .relaxed)
    }

    /// Runs `body` on the decoded form under the box's lock (`body` only takes what it needs: a reference, a
    /// binary search), decoding it first if need be; counts a fresh decode into the cache after the lock is let go.
    @inline(__always)
    private func withDecoded<R>(_ body: (borrowing Decoded) -> R) -> Result<R, EventGraphError> {
        if !isReferenced.load(ordering: .relaxed) { isReferenced.store(true, ordering: .relaxed) }
        var decodedByteCount = 0
        let result = state.withLock { state -> Result<R, EventGraphError> in
            if let decoded = state.decoded { return .success(body(decoded)) }
            if let failure = state.failure { return .failure(failure) }
            switch decodeRetryingFailedReads(&state) {
            case .success(let decoded):
                state.decoded = decoded
                state.decodeCount += 1
                decodedByteCount = decoded.chunk.heapByteCount &+ decoded.sortedKeys.capacity &* 16
                return .success(body(decoded))
            case .failure(let error):
                CheckpointChunkRead.keep(error, in: &state.failure)
                return .failure(error)
            }
        }
        if decodedByteCount > 0 { decoder.source.cache.admit(self, byteCount: decodedByteCount) }
        return result
    }

    /// Reads, verifies and decodes the chunk (under the box's lock), trying a read that failed again up to
    /// ``readRetryCount`` times (``CheckpointChunkRead``); counts every read in `state`.
    private func decodeRetryingFailedReads(_ state: inout State) -> Result<Decoded, EventGraphError> {
        CheckpointChunkRead.retryingFailedReads(eachTry: { state.readCount += 1 }) {
            () throws(EventGraphError) -> Decoded in try decode()
        }
    }

    /// Reads, verifies and decodes the chunk, and sorts its keys.
    private func decode() throws(EventGraphError) -> Decoded {
        let chunk = try decoder.columnChunk(entry, chunkIndex: chunkIndex)
        var keys = chunk.keys.enumerated().map { (key: $0.element, position: $0.offset) }
        keys.sort { $0.key < $1.key }
        return Decoded(chunk: chunk, sortedKeys: keys)
    }
}

/// Checkpoint chunks a commit or a replayed transaction loaded and is about to change, held decoded until it has
/// changed them (``LazyColumnChunk/pin()``): the budget of decoded chunks cannot make the change read one again — a
/// read that could fail (the file damaged or unreadable since) after the log already holds the transaction.
/// Dropping it (its last reference) drops the pins.
final class ChunkPins: Sendable {
    private let boxes: [LazyColumnChunk]

    init(_ boxes: [LazyColumnChunk]) {
        self.boxes = boxes
    }

    deinit {
        for box in boxes { box.unpin() }
    }
}
