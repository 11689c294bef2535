internal import CPrefetch
import LogFormat

extension ColumnChunk {
    /// A row of a live slot that reads its values from this chunk version instead of copying them.
    func rowHandle(at position: Int, entityIndex: Int) -> Row {
        Row(
            entityIndex: entityIndex, key: keys[position], version: versions[position],
            slot: ChunkSlot(self, position: position))
    }

    /// A live slot as a reader holds it: the slot of this chunk version, without a ``Row``; through
    /// `checkpointChunk` when this is that checkpoint chunk's decoded form, unchanged (see ``ChunkSlot``). A caller
    /// that looked the slot up by its key passes it (`key`): a lookup by ID reads the slot's key from memory once
    /// less (h63's profile of fetch-by-id: a cache miss).
    @inline(__always)
    func committedRow(
        at position: Int, entityIndex: Int, checkpointChunk: LazyColumnChunk? = nil, key: UInt64? = nil
    ) -> CommittedRow {
        // The version is read first: in a lookup by ID it is a cache miss, which then overlaps with the slot's
        // (its live bit and value count); read after them, it waited for them (h72's profile: 5 % of fetch-by-id).
        let version = versions[position]
        let slot =
            if let checkpointChunk {
                ChunkSlot(self, position: position, checkpointChunk: checkpointChunk)
            } else {
                ChunkSlot(self, position: position)
            }
        return CommittedRow(entityIndex: entityIndex, key: key ?? keys[position], values: .slot(slot, version: version))
    }

    /// ``committedRow(at:entityIndex:checkpointChunk:key:)`` for a slot that reads `columns`, other columns of this
    /// chunk version one for one (a coordinator's, with their references renumbered).
    @inline(__always)
    func committedRow(at position: Int, entityIndex: Int, key: UInt64, readingColumns columns: [Column])
        -> CommittedRow
    {
        let version = versions[position]
        let slot = ChunkSlot(self, position: position, readingColumns: columns)
        return CommittedRow(entityIndex: entityIndex, key: key, values: .slot(slot, version: version))
    }

    /// Starts loading, without waiting, the version and value count of the slot at `position` of the chunk at
    /// `chunk` (what ``committedRow(at:entityIndex:checkpointChunk:key:)`` reads) and what a read of `property` there
    /// reads first (see ``Column/prefetchValue(of:at:)``; nothing for `property` -1 or past the columns). Nothing for
    /// a position past the chunk's slots (an unloaded chunk's place has none).
    ///
    /// The chunk is read in place and every address taken before the first prefetch: the prefetch is a C call, and
    /// a chunk read out of its array was copied and kept across it (a retain and a release of each of its storages,
    /// as h88 found in `committedRow`).
    @inline(__always)
    static func prefetchSlot(of chunk: UnsafePointer<ColumnChunk>, at position: Int, property: Int) {
        guard position >= 0, position < chunk.pointee.versions.count, position < chunk.pointee.valueCounts.count,
            let version = chunk.pointee.versions.withUnsafeBufferPointer({ $0.baseAddress }),
            let valueCount = chunk.pointee.valueCounts.withUnsafeBufferPointer({ $0.baseAddress })
        else { return }
        let column =
            property >= 0 && property < chunk.pointee.columns.count
            ? chunk.pointee.columns.withUnsafeBufferPointer({ $0.baseAddress }) : nil
        eg_prefetch(UnsafeRawPointer(version + position))
        eg_prefetch(UnsafeRawPointer(valueCount + position))
        if let column { Column.prefetchValue(of: column + property, at: position) }
    }

    /// Starts loading, without waiting, the bytes of `property`'s string or binary value at `position` of the chunk
    /// at `chunk` (see ``Column/prefetchBytes(of:at:)``), read in place as ``prefetchSlot(of:at:property:)``.
    @inline(__always)
    static func prefetchBytes(of chunk: UnsafePointer<ColumnChunk>, at position: Int, property: Int) {
        guard property >= 0, property < chunk.pointee.columns.count,
            let columns = chunk.pointee.columns.withUnsafeBufferPointer({ $0.baseAddress })
        else { return }
        Column.prefetchBytes(of: columns + property, at: position)
    }

    /// Starts loading, without waiting, what a read of `property` at `position` reads first (see
    /// ``Column/prefetchValue(of:at:)``); nothing for a property past the chunk's columns.
    @inline(__always)
    func prefetchValue(ofProperty property: Int, at position: Int) {
        guard property >= 0, property < columns.count,
            let base = columns.withUnsafeBufferPointer({ $0.baseAddress })
        else { return }
        Column.prefetchValue(of: base + property, at: position)
    }
}

extension EntityColumns {
    /// A handle row of a live object (see ``Row``), for readers that keep it.
    func rowHandle(forKey key: UInt64) -> Row? {
        slot(forKey: key).map { rowHandle(atSlot: $0) }
    }

    /// A live object as a reader holds it (a chunk slot, no ``Row``), its chunk read from disk if need be.
    ///
    /// - Throws: the error of a checkpoint chunk that may hold the key and cannot be loaded (never `nil` then: an
    ///   object that exists must not look deleted).
    func lookUpCommittedRow(forKey key: UInt64) throws(EventGraphError) -> CommittedRow? {
        try committedRowAndChunk(forKey: key)?.row
    }

    /// What ``committedRow(inMemoryForKey:)`` finds.
    enum InMemoryLookup {
        /// The object, in a chunk in memory.
        case found(CommittedRow)
        /// No live object has the key.
        case absent
        /// The key may be in a chunk still on disk: look it up in a version taken out of the lock.
        case mayBeOnDisk
    }

    /// A live object's slot when its chunk is in memory, without copying the version (no chunk is read from disk,
    /// so a store can answer a lookup by ID under its lock: a version copied out of the lock costs a retain and a
    /// release of each of its arrays, per lookup).
    @inline(__always)
    func committedRow(inMemoryForKey key: UInt64) -> InMemoryLookup {
        committedRowAndChunk(inMemoryForKey: key).lookup
    }

    /// Calls `body` with each live slot in commit order — every live slot, or those of `slots` (each once however
    /// often it is listed) — as a reader holds it, until `body` returns false. Consecutive slots are mostly in one
    /// chunk: it is taken once per run, not once per slot. `chunkView`, when given, is applied to each chunk taken
    /// (with its index) before its slots are handed out: a coordinator's view with its references renumbered.
    ///
    /// - Throws: what `body` throws, or the error of a checkpoint chunk that cannot be loaded (damaged, or its read
    ///   failed past the retries): a scan that went on without it would silently miss its objects.
    func forEachCommittedRow(
        atSlots slots: [Int]?, chunkView: ((_ chunkIndex: Int, ColumnChunk) -> ColumnChunk)? = nil,
        _ body: (CommittedRow) throws(EventGraphError) -> Bool
    ) throws(EventGraphError) {
        guard let slots else {
            for chunkIndex in 0..<chunkCount {
                let (chunk, box) = try chunkForCommittedRows(at: chunkIndex, chunkView: chunkView)
                for (wordIndex, word) in chunk.liveBits.enumerated() where word != 0 {
                    var bits = word
                    while bits != 0 {
                        let position = wordIndex &* 64 &+ bits.trailingZeroBitCount
                        let row = chunk.committedRow(at: position, entityIndex: entityIndex, checkpointChunk: box)
                        guard try body(row) else { return }
                        bits &= bits &- 1
                    }
                }
            }
            return
        }
        var chunkIndex = -1
        var chunk = ColumnChunk.unloaded
        var box: LazyColumnChunk?
        var previous = -1
        for slot in slots where slot != previous {
            if slot / ColumnChunk.slotCapacity != chunkIndex {
                chunkIndex = slot / ColumnChunk.slotCapacity
                (chunk, box) = try chunkForCommittedRows(at: chunkIndex, chunkView: chunkView)
            }
            let row = chunk.committedRow(
                at: slot % ColumnChunk.slotCapacity, entityIndex: entityIndex, checkpointChunk: box)
            guard try body(row) else { return }
            previous = slot
        }
    }

    /// Chunk `index` as ``forEachCommittedRow(atSlots:chunkView:_:)`` hands out its slots, and the box they read
    /// through (`nil` when they hold the chunk's columns). Objects of a checkpoint chunk hold its box, not its
    /// decoded form (which the cache may evict), so the scan only lists its slots when the cache has no room for
    /// it; a coordinator's view renumbers the chunk's values, which its slots then hold.
    ///
    /// - Throws: the chunk's error when it cannot be loaded.
    @inline(__always)
    private func chunkForCommittedRows(
        at index: Int, chunkView: ((_ chunkIndex: Int, ColumnChunk) -> ColumnChunk)?
    ) throws(EventGraphError) -> (chunk: ColumnChunk, box: LazyColumnChunk?) {
        guard let chunkView else { return (try chunkListingSlots(at: index), checkpointChunk(at: index)) }
        return (chunkView(index, try loadedChunk(at: index)), nil)
    }

    /// ``committedRow(inMemoryForKey:)`` with the index of the chunk that holds the object.
    @inline(__always)
    func committedRowAndChunk(inMemoryForKey key: UInt64) -> (lookup: InMemoryLookup, chunkIndex: Int) {
        guard let slot = directoryHit(key) else {
            return (hasUnloadedChunks && key <= unloadedMaxKeyForLookup ? .mayBeOnDisk : .absent, 0)
        }
        let row = residentCommittedRow(atSlot: slot, key: key)
        return (.found(row), slot / ColumnChunk.slotCapacity)
    }

    /// ``lookUpCommittedRow(forKey:)`` with the index of the chunk that holds the object (read from disk if need be).
    ///
    /// - Throws: the error of a checkpoint chunk that may hold the key and cannot be loaded.
    func committedRowAndChunk(forKey key: UInt64) throws(EventGraphError) -> (row: CommittedRow, chunkIndex: Int)? {
        guard let slot = try lookUpSlot(forKey: key) else { return nil }
        let chunkIndex = slot / ColumnChunk.slotCapacity
        let row = try loadedChunk(at: chunkIndex).committedRow(
            at: slot % ColumnChunk.slotCapacity, entityIndex: entityIndex,
            checkpointChunk: checkpointChunk(at: chunkIndex))
        return (row, chunkIndex)
    }

    /// A handle row of a live slot.
    func rowHandle(atSlot slot: Int) -> Row {
        chunk(at: slot / ColumnChunk.slotCapacity).rowHandle(
            at: slot % ColumnChunk.slotCapacity, entityIndex: entityIndex)
    }

    /// The handle rows of the live objects in commit order: no value is copied.
    ///
    /// - Throws: the error of a checkpoint chunk that cannot be loaded.
    func liveRowHandles() throws(EventGraphError) -> [Row] {
        var rows: [Row] = []
        rows.reserveCapacity(count)
        try forEachCommittedRow(atSlots: nil) { (row: CommittedRow) -> Bool in
            rows.append(row.row)
            return true
        }
        return rows
    }
}

extension StoreState {
    /// A handle row of an object, for readers that keep it (contexts); the commit path reads
    /// ``row(entityIndex:key:)``, whose values are copied, so that the rows it holds while writing a chunk do not
    /// make the write copy the chunk.
    func rowHandle(entityIndex: Int, key: UInt64) -> Row? {
        tables[entityIndex].rowHandle(forKey: key)
    }

    /// ``EntityColumns/committedRow(inMemoryForKey:)`` of an entity's current version, read in place.
    @inline(__always)
    func committedRow(inMemoryForKey key: UInt64, entityIndex: Int) -> EntityColumns.InMemoryLookup {
        tables[entityIndex].committedRow(inMemoryForKey: key)
    }
}
