import Dispatch
import LogFormat

/// The committed objects of one entity, by column in chunks of ``ColumnChunk/slotCapacity``, in commit order
/// (deterministic across reopen), with a key directory.
///
/// Chunks of a checkpoint (format 1.3) may stay on disk until something touches them (``LazyColumnChunk``): a
/// version finds a key in such a chunk through the directory's key range and the chunk's own sorted keys, and a
/// commit that changes the chunk makes it resident first.
///
/// It is a value, and a cheap one to copy: a copy is a version of the entity that later commits do not change. A
/// commit copies only the chunks (and their columns) and key-directory shards it touches while an older version is
/// held, so a reader takes a version under the store's lock and reads it after letting the lock go. Deleting
/// empties a slot that scans skip; the chunks in memory are rewritten without empty slots once those outnumber the
/// live ones (``compact()``: a chunk still on disk is never read for it).
struct EntityColumns: Sendable {
    let entityIndex: Int
    /// The chunks in memory; an unloaded chunk's place holds ``ColumnChunk/unloaded`` until it is touched.
    private(set) var resident: [ColumnChunk] = []
    /// For each chunk, the checkpoint chunk it still is on disk (`nil` once this version holds it in `resident`).
    private(set) var unloaded: [LazyColumnChunk?] = []
    /// The keys of the objects in resident chunks (an unloaded chunk's keys are found through its box).
    private(set) var directory = KeyDirectory()
    /// The number of objects in unloaded chunks (all live: a checkpoint holds live objects only).
    private(set) var unloadedObjectCount = 0
    /// The largest key an unloaded chunk may hold: a new key above it needs no chunk loaded to prove it is new.
    private(set) var unloadedMaxKey: UInt64 = 0
    /// The checkpoint's chunks (their indices into ``unloaded``) in ascending order of their smallest key, so that
    /// the chunk that may hold a key is found by binary search instead of asking every chunk (``candidates(for:)``).
    /// Built once when the chunks are adopted: a chunk made resident keeps its place (``unloaded`` is `nil` there).
    private(set) var chunksByMinKey: [(minKey: UInt64, index: Int)] = []
    /// Whether the key ranges of the checkpoint's chunks are disjoint (as a checkpoint writes an entity's objects, in
    /// key order): then at most one chunk may hold a key. Otherwise every chunk whose range includes it is asked.
    private(set) var chunkRangesAreDisjoint = false
    private var emptiedCount = 0
    /// Whether ``resident`` also holds the decoded form of every checkpoint chunk (``pinningCheckpointChunks()``).
    private(set) var pinsCheckpointChunks = false

    init(entityIndex: Int) {
        self.entityIndex = entityIndex
    }

    /// The number of live objects.
    var count: Int { directory.count + unloadedObjectCount }

    /// The number of chunks, loaded or not.
    var chunkCount: Int { resident.count }

    /// Whether some chunk is still on disk in this version.
    var hasUnloadedChunks: Bool { unloadedObjectCount > 0 }

    /// The number of chunks still on disk in this version.
    var unloadedChunkCount: Int { unloaded.reduce(0) { $0 + ($1 == nil ? 0 : 1) } }

    /// The number of chunks of the checkpoint that no version has read yet (a probe for tests: open reads none).
    var unreadChunkCount: Int { unloaded.reduce(0) { $0 + ($1.map { $0.isLoaded ? 0 : 1 } ?? 0) } }

    /// The number of slots used, live or emptied (slots are numbered in commit order).
    var slotCount: Int {
        guard let last = resident.indices.last else { return 0 }
        return last * ColumnChunk.slotCapacity + (unloaded[last]?.objectCount ?? resident[last].slotCount)
    }

    /// A copy of this version that holds the decoded form of every checkpoint chunk itself (each read now if its
    /// box does not hold it), for a pass over every chunk — a checkpoint's plan and its digest: each chunk is then
    /// decoded once for the whole pass, whatever the budget of decoded chunks (``DecodedChunkCache``), and cannot
    /// fail to read again half-way. Held only for that pass.
    ///
    /// The chunks are read and decoded on every core (each box under its own lock), a few at a time.
    ///
    /// - Throws: the error of the first damaged chunk (in chunk order).
    func pinningCheckpointChunks() throws(EventGraphError) -> EntityColumns {
        guard unloadedObjectCount > 0, !pinsCheckpointChunks else { return self }
        var copy = self
        for (index, chunk) in try loadingUnloadedChunks() { copy.resident[index] = chunk }
        copy.pinsCheckpointChunks = true
        return copy
    }

    /// Makes every checkpoint chunk resident, read and decoded now on every core, as a commit makes the chunks it
    /// changes resident: for a tool's state, which reads every object (its digest, its checks) and must report a
    /// damaged chunk as an error, not end the process in a getter.
    ///
    /// - Throws: the error of the first damaged chunk (in chunk order); nothing is changed then.
    mutating func makeCheckpointChunksResident() throws(EventGraphError) {
        guard unloadedObjectCount > 0 else { return }
        let loaded = try loadingUnloadedChunks()
        directory.reserveCapacity(adding: unloadedObjectCount)
        for (index, chunk) in loaded {
            unloadedObjectCount -= unloaded[index]!.objectCount
            unloaded[index] = nil
            resident[index] = chunk
            let base = index * ColumnChunk.slotCapacity
            for (position, key) in chunk.keys.enumerated() where chunk.isLive(position) {
                directory.set(base + position, for: key)
            }
        }
        pinsCheckpointChunks = false
    }

    /// Every unloaded chunk with its index, read and decoded on every core (each box under its own lock).
    ///
    /// - Throws: the error of the first damaged chunk (in chunk order).
    private func loadingUnloadedChunks() throws(EventGraphError) -> [(index: Int, chunk: ColumnChunk)] {
        let boxes = unloaded.enumerated().compactMap { index, lazy in lazy.map { (index, $0) } }
        let loaded = LockedValue<[Result<ColumnChunk, EventGraphError>?]>(Array(repeating: nil, count: boxes.count))
        DispatchQueue.concurrentPerform(iterations: boxes.count) { position in
            let result = Result { () throws(EventGraphError) in try boxes[position].1.load() }
            loaded.withLock { $0[position] = result }
        }
        var chunks: [(index: Int, chunk: ColumnChunk)] = []
        chunks.reserveCapacity(boxes.count)
        for (position, result) in loaded.withLock({ $0 }).enumerated() {
            chunks.append((boxes[position].0, try result!.get()))
        }
        return chunks
    }

    // MARK: - Loading

    /// Takes a checkpoint's chunks of this entity (format 1.3), in slot order, as chunks that stay on disk until
    /// touched: chunk *i* holds slots *i* × ``ColumnChunk/slotCapacity`` onwards.
    ///
    /// - Precondition: the entity holds no object yet.
    mutating func adoptUnloadedChunks(_ chunks: [LazyColumnChunk]) {
        precondition(resident.isEmpty, "entity #\(entityIndex) already holds objects when its checkpoint chunks come")
        resident = Array(repeating: ColumnChunk.unloaded, count: chunks.count)
        unloaded = chunks
        unloadedObjectCount = chunks.reduce(0) { $0 + $1.objectCount }
        unloadedMaxKey = chunks.map(\.entry.maxKey).max() ?? 0
        chunksByMinKey = chunks.enumerated().map { (minKey: $0.element.entry.minKey, index: $0.offset) }
        chunksByMinKey.sort { ($0.minKey, $0.index) < ($1.minKey, $1.index) }
        chunkRangesAreDisjoint = chunksByMinKey.indices.dropFirst().allSatisfy { position in
            chunks[chunksByMinKey[position - 1].index].entry.maxKey < chunksByMinKey[position].minKey
        }
        if !chunkRangesAreDisjoint {
            // Asked in chunk order, as before the order existed (the first damaged chunk is the one reported).
            chunksByMinKey.sort { $0.index < $1.index }
        }
    }

    /// Loads every unloaded chunk that may hold one of `keys` (a commit's or a replayed transaction's objects),
    /// so that the changes are applied to chunks known to be intact, and pins each (``LazyColumnChunk/pin()``,
    /// appended to `pins` once per chunk) so that it is still decoded when the changes are applied.
    ///
    /// - Throws: the error of the first such chunk that is damaged (the chunks pinned before it stay in `pins`).
    func load(keys: some Sequence<UInt64>, pinning pins: inout [LazyColumnChunk]) throws(EventGraphError) {
        guard unloadedObjectCount > 0 else { return }
        var pinned = Set(pins.lazy.map(ObjectIdentifier.init))
        for key in keys where key <= unloadedMaxKey && directory[key] == nil {
            for candidate in candidates(for: key) {
                guard let lazy = unloaded[chunksByMinKey[candidate].index], lazy.mayHold(key),
                    pinned.insert(ObjectIdentifier(lazy)).inserted
                else { continue }
                try lazy.pin()
                pins.append(lazy)
            }
        }
    }

    /// Loads every unloaded chunk and pins each (``LazyColumnChunk/pin()``, appended to `pins`), so that an index
    /// built from this entity's chunks finds every one of them decoded.
    ///
    /// - Throws: the error of the first chunk that is damaged or whose read failed (the chunks pinned before it stay
    ///   in `pins`).
    func loadAll(pinning pins: inout [LazyColumnChunk]) throws(EventGraphError) {
        for case let lazy? in unloaded {
            try lazy.pin()
            pins.append(lazy)
        }
    }

    /// Makes chunk `index` resident in this version (its keys join the directory) before it is changed.
    private mutating func makeResident(_ index: Int) {
        guard let lazy = unloaded[index] else { return }
        // Callers loaded the chunks they change with `load(keys:pinning:)`, which throws for a damaged one, and hold
        // the pins until the change is applied, so the budget of decoded chunks cannot have evicted it: this load
        // reads nothing. Were it to fail, stopping is the one safe answer: an empty chunk here would drop its
        // objects from the state.
        let chunk: ColumnChunk
        do {
            chunk = try lazy.load()
        } catch {
            preconditionFailure("a chunk a commit changes could not be read again: \(error.message)")
        }
        unloaded[index] = nil
        resident[index] = chunk
        unloadedObjectCount -= lazy.objectCount
        let base = index * ColumnChunk.slotCapacity
        for (position, key) in chunk.keys.enumerated() where chunk.isLive(position) {
            directory.set(base + position, for: key)
        }
    }

    // MARK: - Changing

    /// Makes room for `count` more objects.
    mutating func reserveCapacity(adding count: Int) {
        directory.reserveCapacity(adding: count)
        let chunkCount = (slotCount + count + ColumnChunk.slotCapacity - 1) / ColumnChunk.slotCapacity
        resident.reserveCapacity(chunkCount)
        unloaded.reserveCapacity(chunkCount)
    }

    /// Inserts or replaces the row with the same key.
    mutating func put(_ row: Row) {
        precondition(row.entityIndex == entityIndex, "a row of entity #\(row.entityIndex) put in #\(entityIndex)")
        // The row's own array when it holds one (an update's rows do), written through its buffer; a new object's
        // values are read from its changes, not copied into an array first.
        if case .array(let values) = row.values.storage {
            put(key: row.key, version: row.version, values: values)
        } else {
            put(key: row.key, version: row.version, values: row.values)
        }
    }

    /// Inserts or replaces the object with `key`, without a ``Row`` (a replayed insert).
    mutating func put(key: UInt64, version: UInt64, values: some RandomAccessCollection<PropertyValue>) {
        put(key: key, version: version, values: values, slot: slot(forKey: key))
    }

    /// ``put(key:version:values:)`` for a caller that has just looked the key up: `slot` is
    /// ``slot(forKey:)``'s answer, and the table has not changed since.
    mutating func put(
        key: UInt64, version: UInt64, values: some RandomAccessCollection<PropertyValue>, slot: Int?
    ) {
        if let slot {
            makeResident(slot / ColumnChunk.slotCapacity)
            resident[slot / ColumnChunk.slotCapacity].replace(
                at: slot % ColumnChunk.slotCapacity, version: version, values: values)
            return
        }
        let index = chunkIndexForNewObject()
        let position = resident[index].append(key: key, version: version, values: values)
        directory.set(index * ColumnChunk.slotCapacity + position, for: key)
    }

    /// Appends new objects, whose keys no live object has (``slot(forKey:)`` found none for each), in order, chunk
    /// by chunk: each chunk's share is written column by column on every core (see
    /// ``ColumnChunk/appendInserted(_:alongside:)``, which runs `alongside` with each batch).
    mutating func appendInserted(_ rows: UnsafeBufferPointer<InsertedRow>, alongside: InsertedRowsTask? = nil) {
        var start = 0
        while start < rows.count {
            let index = chunkIndexForNewObject()
            let end = min(rows.count, start + ColumnChunk.slotCapacity - resident[index].slotCount)
            let first = resident[index].appendInserted(
                UnsafeBufferPointer(rebasing: rows[start..<end]), alongside: alongside)
            for offset in 0..<(end - start) {
                directory.set(index * ColumnChunk.slotCapacity + first + offset, for: rows[start + offset].key)
            }
            start = end
        }
    }

    /// Adds an object whose key no live object has (``slot(forKey:)`` found none) with `valueCount` properties:
    /// `write` writes every one of its values into the slot made for it (a replayed insert, writing the decoded
    /// values straight into the columns, without a row of ``PropertyValue``s).
    mutating func append(
        key: UInt64, version: UInt64, valueCount: Int, _ write: (inout ColumnChunk, _ position: Int) -> Void
    ) {
        let index = chunkIndexForNewObject()
        let position = resident[index].appendSlot(key: key, version: version, valueCount: valueCount)
        write(&resident[index], position)
        directory.set(index * ColumnChunk.slotCapacity + position, for: key)
    }

    /// The resident chunk a new object goes into: the last one unless it is full (a full one on disk stays there).
    private mutating func chunkIndexForNewObject() -> Int {
        if let last = resident.indices.last, let lazy = unloaded[last], lazy.objectCount < ColumnChunk.slotCapacity {
            makeResident(last)
        }
        if resident.isEmpty || unloaded[resident.count - 1] != nil || resident[resident.count - 1].isFull {
            var fresh = ColumnChunk()
            if let full = resident.last, unloaded[resident.count - 1] == nil, full.isFull {
                // Objects appended one after another (a replay's or a bulk save's inserts) fill chunk after chunk:
                // the new one gets the room the full one before it uses (every storage it uses, for every slot; its
                // arenas' live bytes and its to-many targets, in memory already, and a sixty-fourth more: see
                // `ReservedGrowth`), so that its arrays are allocated once instead of doubling — copying and faulting
                // in their bytes again — along the way.
                fresh.reserveCapacity(like: full)
            }
            resident.append(fresh)
            unloaded.append(nil)
        }
        return resident.count - 1
    }

    /// Calls `body` with the chunk (made resident in this version) and the position of a live object, to change it
    /// in place; `nil` when no live object has `key`.
    mutating func modify<R>(key: UInt64, _ body: (inout ColumnChunk, _ position: Int) throws(EventGraphError) -> R)
        throws(EventGraphError) -> R?
    {
        guard let slot = slot(forKey: key) else { return nil }
        let index = slot / ColumnChunk.slotCapacity
        makeResident(index)
        return try body(&resident[index], slot % ColumnChunk.slotCapacity)
    }

    mutating func remove(key: UInt64) {
        guard let found = slot(forKey: key) else { return }
        makeResident(found / ColumnChunk.slotCapacity)
        guard let slot = directory.remove(key) else { return }
        resident[slot / ColumnChunk.slotCapacity].remove(at: slot % ColumnChunk.slotCapacity)
        emptiedCount += 1
        if emptiedCount > 1024 && emptiedCount > count { compact() }
    }

    /// Rewrites the chunks with the live objects only, in the same order, reading no chunk from disk: this runs
    /// while a commit is installed (under the store's lock, the transaction already in the log), where a read that
    /// fails could neither be reported nor skipped. With every chunk in memory, the live objects are packed into
    /// full chunks; while checkpoint chunks are still on disk, only the chunks in memory are rewritten, each in its
    /// place (``compactResidentChunks()``).
    private mutating func compact() {
        guard unloadedObjectCount == 0 else { return compactResidentChunks() }
        var live: [Row] = []
        live.reserveCapacity(count)
        // Every chunk is resident: `forEachLiveSlot` reads none from disk.
        forEachLiveSlot { chunk, position, _ in live.append(chunk.rowHandle(at: position, entityIndex: entityIndex)) }
        resident.removeAll()
        unloaded.removeAll()
        chunksByMinKey = []
        chunkRangesAreDisjoint = false
        directory.removeAll()
        unloadedObjectCount = 0
        emptiedCount = 0
        reserveCapacity(adding: live.count)
        for row in live { put(row) }
    }

    /// Rewrites each resident chunk that has emptied slots with its live objects only, at the same chunk index, so
    /// that the slots of the checkpoint chunks still on disk (chunk index × ``ColumnChunk/slotCapacity`` onwards)
    /// stay what they are. A chunk may then hold fewer slots than its capacity; new objects still go into the last.
    private mutating func compactResidentChunks() {
        for index in resident.indices where unloaded[index] == nil {
            let chunk = resident[index]
            guard chunk.liveBits.reduce(0, { $0 + $1.nonzeroBitCount }) < chunk.slotCount else { continue }
            var fresh = ColumnChunk()
            let base = index * ColumnChunk.slotCapacity
            for position in 0..<chunk.slotCount where chunk.isLive(position) {
                let row = chunk.rowHandle(at: position, entityIndex: entityIndex)
                directory.set(base + fresh.append(row), for: row.key)
            }
            resident[index] = fresh
        }
        emptiedCount = 0
    }
}
