import LogFormat

/// The committed objects of one entity, by column in chunks of ``ColumnChunk/slotCapacity``, in commit order
/// (deterministic across reopen), with a key directory.
///
/// It is a value, and a cheap one to copy: a copy is a version of the entity that later commits do not change. A
/// commit copies only the chunks (and their columns) and key-directory shards it touches while an older version is
/// held, so a reader takes a version under the store's lock and reads it after letting the lock go. Deleting
/// empties a slot that scans skip; the chunks are rewritten without empty slots once those outnumber the live ones.
struct EntityColumns: Sendable {
    let entityIndex: Int
    private(set) var chunks: [ColumnChunk] = []
    private var directory = KeyDirectory()
    private var emptiedCount = 0

    init(entityIndex: Int) {
        self.entityIndex = entityIndex
    }

    /// The number of live objects.
    var count: Int { directory.count }

    /// The number of slots used, live or emptied (slots are numbered in commit order).
    var slotCount: Int { chunks.last.map { (chunks.count - 1) * ColumnChunk.slotCapacity + $0.slotCount } ?? 0 }

    /// The slot of a live object.
    func slot(forKey key: UInt64) -> Int? { directory[key] }

    func row(forKey key: UInt64) -> Row? {
        directory[key].map { row(atSlot: $0) }
    }

    /// The row of a live slot.
    func row(atSlot slot: Int) -> Row {
        chunks[slot / ColumnChunk.slotCapacity].row(at: slot % ColumnChunk.slotCapacity, entityIndex: entityIndex)
    }

    /// The rows of some live slots in commit order (slot order), each once however often it is listed: handles that
    /// read their values from the chunks (see ``Row``).
    func rows(atSlots slots: [Int]) -> [Row] {
        var rows: [Row] = []
        rows.reserveCapacity(slots.count)
        var previous = -1
        for slot in slots.sorted() where slot != previous {
            rows.append(rowHandle(atSlot: slot))
            previous = slot
        }
        return rows
    }

    /// Whether a slot holds a live object.
    func isLive(slot: Int) -> Bool {
        chunks[slot / ColumnChunk.slotCapacity].isLive(slot % ColumnChunk.slotCapacity)
    }

    /// Makes room for `count` more objects.
    mutating func reserveCapacity(adding count: Int) {
        directory.reserveCapacity(adding: count)
        let chunkCount = (slotCount + count + ColumnChunk.slotCapacity - 1) / ColumnChunk.slotCapacity
        chunks.reserveCapacity(chunkCount)
    }

    /// Inserts or replaces the row with the same key.
    mutating func put(_ row: Row) {
        precondition(row.entityIndex == entityIndex, "a row of entity #\(row.entityIndex) put in #\(entityIndex)")
        if let slot = directory[row.key] {
            chunks[slot / ColumnChunk.slotCapacity].replace(at: slot % ColumnChunk.slotCapacity, with: row)
            return
        }
        if chunks.last?.isFull ?? true { chunks.append(ColumnChunk()) }
        let position = chunks[chunks.count - 1].append(row)
        directory.set((chunks.count - 1) * ColumnChunk.slotCapacity + position, for: row.key)
    }

    mutating func remove(key: UInt64) {
        guard let slot = directory.remove(key) else { return }
        chunks[slot / ColumnChunk.slotCapacity].remove(at: slot % ColumnChunk.slotCapacity)
        emptiedCount += 1
        if emptiedCount > 1024 && emptiedCount > directory.count { compact() }
    }

    /// Rewrites the chunks with the live objects only, in the same order.
    private mutating func compact() {
        let live = liveRowHandles
        chunks.removeAll()
        directory.removeAll()
        emptiedCount = 0
        reserveCapacity(adding: live.count)
        for row in live { put(row) }
    }

    /// Calls `body` with every live slot in commit order.
    func forEachLiveSlot(_ body: (_ chunk: ColumnChunk, _ position: Int, _ slot: Int) throws -> Void) rethrows {
        for (chunkIndex, chunk) in chunks.enumerated() {
            let base = chunkIndex * ColumnChunk.slotCapacity
            for (wordIndex, word) in chunk.liveBits.enumerated() where word != 0 {
                var bits = word
                while bits != 0 {
                    let position = wordIndex * 64 + bits.trailingZeroBitCount
                    try body(chunk, position, base + position)
                    bits &= bits - 1
                }
            }
        }
    }

    /// The live rows in commit order, each built from the columns.
    var liveRows: [Row] {
        var rows: [Row] = []
        rows.reserveCapacity(count)
        forEachLiveSlot { chunk, position, _ in rows.append(chunk.row(at: position, entityIndex: entityIndex)) }
        return rows
    }

    /// The live objects' values of one attribute, with their keys, in commit order (for building indexes without
    /// building rows).
    func forEachAttributeValue(property: Int, _ body: (_ key: UInt64, _ value: PropertyValue?) -> Void) {
        forEachLiveSlot { chunk, position, _ in
            let value = property < chunk.columns.count ? chunk.columns[property].value(at: position) : nil
            body(chunk.keys[position], value)
        }
    }
}
