import LogFormat
import Synchronization

/// Where a store reads the entity chunks of its checkpoint from (format 1.3, `Docs/FileFormat-Checkpoints.md`): the
/// log file as it was when the store opened it. The reader holds that file open, so a compaction that renames a new
/// file over the path later does not move the chunks a version of the state still has to load.
struct CheckpointChunkSource: Sendable {
    let reader: LogReader
    /// The checkpoint's last transaction, which every one of its entity chunks carries.
    let checkpointTransactionID: UInt64
    /// The budget of decoded chunks their boxes share (``LazyColumnChunk``).
    var cache = DecodedChunkCache(byteBudget: Int.max)

    /// Reads, verifies and decodes chunk `chunkIndex` of an entity (`pread`; safe from any thread).
    ///
    /// - Throws: ``EventGraphError/Code/log`` naming the file, the entity, the chunk and its byte offset when the
    ///   chunk is damaged or cannot be read. The LogFormat error is attached as the underlying one only for a read
    ///   that failed (``EventGraphError/isFailedRead``, which a box tries again): a damaged *frame* makes the
    ///   container advise a read-only view up to the damage, which a damaged chunk of the checkpoint the view would
    ///   start from cannot offer yet.
    func load(_ entry: EntityChunkEntry, chunkIndex: Int, entityIndex: Int, entityName: String)
        throws(EventGraphError) -> CheckpointChunk
    {
        try visit(
            entry, chunkIndex: chunkIndex, entityIndex: entityIndex, entityName: entityName,
            visitor: CheckpointChunkCollector()
        ).chunk
    }

    /// Reads and verifies chunk `chunkIndex` of an entity as ``load(_:chunkIndex:entityIndex:entityName:)`` does,
    /// decoding it into `visitor` (see LogFormat's `CheckpointChunkVisitor`); returns the visitor.
    func visit<Visitor: CheckpointChunkVisitor>(
        _ entry: EntityChunkEntry, chunkIndex: Int, entityIndex: Int, entityName: String, visitor: consuming Visitor
    ) throws(EventGraphError) -> Visitor {
        do {
            return try reader.visitEntityChunk(
                entry, entityIndex: UInt32(entityIndex), checkpointTransactionID: checkpointTransactionID,
                visitor: visitor)
        } catch {
            throw damage(
                entry, chunkIndex: chunkIndex, entityName: entityName, error.message,
                underlying: error.code == .io ? error : nil)
        }
    }

    /// Reads and verifies chunk `chunkIndex` of an entity as ``load(_:chunkIndex:entityIndex:entityName:)`` does and
    /// returns the table of foreign stores it begins with, without decoding its records (LogFormat's
    /// `LogReader.readEntityChunkForeignStores(_:checkpointTransactionID:)`).
    func foreignStores(of entry: EntityChunkEntry, chunkIndex: Int, entityName: String) throws(EventGraphError)
        -> [LogUUID]
    {
        do {
            return try reader.readEntityChunkForeignStores(entry, checkpointTransactionID: checkpointTransactionID)
        } catch {
            throw damage(
                entry, chunkIndex: chunkIndex, entityName: entityName, error.message,
                underlying: error.code == .io ? error : nil)
        }
    }

    /// The error of a chunk that cannot be used: names the file, the entity, the chunk and its byte offset.
    func damage(
        _ entry: EntityChunkEntry, chunkIndex: Int, entityName: String, _ reason: String,
        underlying: LogFormatError? = nil
    ) -> EventGraphError {
        EventGraphError(
            .log,
            "\(reader.path): chunk \(chunkIndex) of entity \(entityName) (byte offset \(entry.byteOffset)) in the "
                + "checkpoint at transaction \(checkpointTransactionID) cannot be loaded: \(reason)",
            underlying: underlying)
    }
}

/// What turns one entity chunk's records into a column chunk: the source, the entity, the defaults of the schema in
/// force when the checkpoint was read, and the state's table of foreign stores at that point.
struct CheckpointChunkDecoder: Sendable {
    let source: CheckpointChunkSource
    let entityIndex: Int
    let entityName: String
    /// The value of each property a record leaves out (the recorded schema's defaults).
    let defaults: [PropertyValue]
    /// The state's foreign stores when the directory was read: a chunk's references are re-expressed in it.
    let foreignStores: [LogUUID]
    /// The names of the entity's properties in the model, by index: what a read that cannot be fulfilled names.
    var propertyNames: [String] = []

    /// Reads, verifies and decodes one chunk into a column chunk whose slot *i* holds the chunk's record *i*: each
    /// value goes straight from the payload into its column (a string's bytes into the arena, checked to be UTF-8
    /// once), without a `PropertyValue` or a `String` per value. With `includesValues` false, only the slots are
    /// listed (keys, versions, value counts, live bits; every column empty): the same reads and checks, for a scan
    /// that hands out slots read through the chunk's box later (``LazyColumnChunk/slotListing()``).
    func columnChunk(_ entry: EntityChunkEntry, chunkIndex: Int, includesValues: Bool = true) throws(EventGraphError)
        -> ColumnChunk
    {
        let builder = try source.visit(
            entry, chunkIndex: chunkIndex, entityIndex: entityIndex, entityName: entityName,
            visitor: ColumnChunkBuilder(
                defaults: defaults, version: source.checkpointTransactionID, foreignStores: foreignStores,
                entityName: entityName, includesValues: includesValues))
        if let problem = builder.storeProblem ?? builder.propertyProblem {
            throw source.damage(entry, chunkIndex: chunkIndex, entityName: entityName, problem)
        }
        // The arrays grew by appending (a frame gives no column's byte count); at their size, a decoded chunk holds
        // its values once, not up to twice (h47's heap profile: 56.5 MB of arenas for 51 MB of attribute bytes).
        var chunk = builder.chunk
        _ = consume builder  // so that the chunk's arrays are the only references to their storage
        chunk.shrinkToFit()
        return chunk
    }
}

/// Builds a column chunk from an entity chunk as it is decoded: slot *i* holds record *i*, with the recorded
/// defaults for the properties the record leaves out. What it cannot use (a store the checkpoint's first chunk does
/// not list, a property the entity lacks) is noted and thrown once the chunk has decoded and passed LogFormat's
/// checks, in the order the checks ran when the chunk was decoded into records first. Without values
/// (`includesValues` false) it lists the slots only, checking the same.
struct ColumnChunkBuilder: CheckpointChunkVisitor {
    private(set) var chunk = ColumnChunk()
    let defaults: [PropertyValue]
    /// Whether the values are written into the columns (else the columns stay empty: a listing of the slots).
    let includesValues: Bool
    let version: UInt64
    /// The state's foreign stores, which the chunk's own table is re-expressed in.
    let foreignStores: [LogUUID]
    let entityName: String
    private var storeMap: [UInt32] = []
    private(set) var storeProblem: String?
    private(set) var propertyProblem: String?
    /// The slot of the record being decoded (`nil` when it is skipped: the chunk is full).
    private var slot: Int?
    private var key: UInt64 = 0
    /// For each property, the number of the last record that set it (the others take their default).
    private var setBy: [Int]
    private var recordNumber = 0

    init(
        defaults: [PropertyValue], version: UInt64, foreignStores: [LogUUID], entityName: String,
        includesValues: Bool = true
    ) {
        self.defaults = defaults
        self.includesValues = includesValues
        self.version = version
        self.foreignStores = foreignStores
        self.entityName = entityName
        setBy = Array(repeating: 0, count: defaults.count)
    }

    mutating func visitForeignStores(_ stores: [LogUUID]) {
        // A chunk's own table of foreign stores is re-expressed in the state's (every chunk of a checkpoint carries
        // the writer's one table, which the state interned when the directory was read).
        for uuid in stores {
            guard let index = foreignStores.firstIndex(of: uuid) else {
                if storeProblem == nil {
                    storeProblem = "it references store \(uuid), which the checkpoint's first chunk does not list"
                }
                storeMap.append(0)
                continue
            }
            storeMap.append(UInt32(index + 1))
        }
    }

    mutating func visitRecordCount(_ count: Int) {}

    mutating func visitRecord(_ object: ObjectReference) {
        recordNumber += 1
        key = object.key
        // LogFormat checks the count against the directory; a chunk listed with more objects than a column chunk
        // holds is refused there or by the directory's reader, and is never written into a full chunk here.
        slot = chunk.isFull ? nil : chunk.appendSlot(key: object.key, version: version, valueCount: defaults.count)
    }

    mutating func visitProperty(_ propertyIndex: UInt32, _ value: BorrowedPropertyValue) {
        let property = Int(propertyIndex)
        guard property < defaults.count else {
            if propertyProblem == nil {
                propertyProblem = "object \(key) sets property #\(property), which \(entityName) lacks"
            }
            return
        }
        guard let slot, includesValues else { return }
        setBy[property] = recordNumber
        switch value {
        case .value(let value):
            if storeMap.isEmpty {
                chunk.set(value, property: property, at: slot)
            } else {
                let change = PropertyChange(propertyIndex: propertyIndex, value: value)
                chunk.set(StoreState.localize(change, storeMap).value, property: property, at: slot)
            }
        case .bytes(let kind, let bytes, let isASCII):
            chunk.set(bytes: bytes, tag: ValueTag(kind), property: property, at: slot, isASCII: isASCII)
        case .toMany(let targets):
            if storeMap.isEmpty {
                // From the decoder's buffer into the column (an array only for a list long enough to keep its own).
                chunk.updateColumn(property: property, at: slot) { $0.set(manyTargets: targets, at: slot) }
            } else {
                // Localized as a list decoded whole: `.value` of the same targets.
                visitProperty(propertyIndex, .value(value.materialized))
            }
        }
    }

    mutating func endRecord() {
        guard let slot, includesValues else { return }
        for property in defaults.indices where setBy[property] != recordNumber {
            chunk.set(defaults[property], property: property, at: slot)
        }
    }
}

extension ValueTag {
    /// The tag of a byte value of a kind.
    init(_ kind: ByteValueKind) {
        switch kind {
        case .string: self = .string
        case .url: self = .url
        case .decimal: self = .decimal
        case .binary: self = .binary
        case .transformable: self = .transformable
        }
    }
}

extension ByteValueKind {
    /// The kind of a byte value's tag; `nil` for a tag whose values are not bytes.
    init?(_ tag: ValueTag) {
        switch tag {
        case .string: self = .string
        case .url: self = .url
        case .decimal: self = .decimal
        case .binary: self = .binary
        case .transformable: self = .transformable
        default: return nil
        }
    }
}

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
