import LogFormat

extension EntityColumns {
    /// Chunk `index`, read from the checkpoint the first time any version touches it, for a caller that cannot
    /// throw: the commit path and the index builds, which load and pin the chunks they read first (``ChunkPins``,
    /// so this cannot fail there), a pass over a version that holds every chunk (``pinningCheckpointChunks()``), and a
    /// lookup by key for a getter or a fault (as ``slot(forKey:)``). A chunk that cannot be loaded ends the process
    /// with the message of a getter (``LazyColumnChunk/unfulfilledReadMessage(_:property:)``: the file, the entity,
    /// the chunk, its byte offset); it never reads as holding no object, which would make its objects look deleted.
    /// Scans call ``loadedChunk(at:)`` and ``chunkListingSlots(at:)``, which throw.
    func chunk(at index: Int) -> ColumnChunk {
        guard let lazy = unloaded[index], !pinsCheckpointChunks else { return resident[index] }
        do {
            return try lazy.load()
        } catch {
            fatalError(lazy.unfulfilledReadMessage(error, property: nil))
        }
    }

    /// Chunk `index` for a scan that hands out its slots to be read through the chunk's box (``checkpointChunk(at:)``,
    /// ``ChunkSlot``), not from the chunk returned: a checkpoint chunk's slots are only listed, its values not decoded,
    /// when the budget of decoded chunks has no room for it (``LazyColumnChunk/slotListing()``). Reads as
    /// ``loadedChunk(at:)`` otherwise.
    ///
    /// - Throws: the chunk's error when it cannot be loaded (damaged, or its read failed): a scan that went on
    ///   without it would miss its objects.
    func chunkListingSlots(at index: Int) throws(EventGraphError) -> ColumnChunk {
        guard let lazy = unloaded[index], !pinsCheckpointChunks else { return resident[index] }
        return try lazy.slotListing()
    }

    /// The box of chunk `index` when this version still holds it as the checkpoint's chunk (no commit changed it):
    /// readers that keep a slot of it hold the box, whose decoded form the store's cache may evict.
    @inline(__always)
    func checkpointChunk(at index: Int) -> LazyColumnChunk? { unloaded[index] }

    /// Chunk `index`, read from the checkpoint if it is not in memory yet.
    ///
    /// - Throws: ``EventGraphError/Code/log`` naming the file, the entity, the chunk and its byte offset when the
    ///   chunk is damaged.
    func loadedChunk(at index: Int) throws(EventGraphError) -> ColumnChunk {
        guard let lazy = unloaded[index], !pinsCheckpointChunks else { return resident[index] }
        return try lazy.load()
    }

    /// Every chunk in slot order (each unloaded one is loaded, as ``chunk(at:)``: for a pinned version).
    var chunks: [ColumnChunk] { resident.indices.map(chunk(at:)) }

    /// The slot of a live object, for a caller that cannot throw: a checkpoint chunk that may hold the key and
    /// cannot be loaded ends the process with a message naming the file, the entity, the chunk, its byte offset and
    /// the key (see ``lookUpSlot(forKey:)``).
    ///
    /// Inlined with ``lookUpSlot(forKey:)``, so that a caller reaching the columns through an array
    /// (`tables[entityIndex].slot(forKey:)`, once per replayed insert) reads the directory in place instead of
    /// copying the whole entity first (a retain and a release of each of its storages).
    @inline(__always)
    func slot(forKey key: UInt64) -> Int? {
        do {
            return try lookUpSlot(forKey: key)
        } catch {
            fatalError("EventGraph could not fulfill a lookup of the object with key \(key): \(error.message)")
        }
    }

    /// The slot of a live object; `nil` when no live object has the key.
    ///
    /// - Throws: the error of a checkpoint chunk that may hold the key and cannot be loaded (damaged, or its read
    ///   failed): the object may be in it, so `nil` would make an object that exists look deleted.
    @inline(__always)
    func lookUpSlot(forKey key: UInt64) throws(EventGraphError) -> Int? {
        if let slot = directory[key] { return slot }
        guard unloadedObjectCount > 0, key <= unloadedMaxKey else { return nil }
        return try unloadedSlot(forKey: key)
    }

    /// The slot of a key that may be in an unloaded checkpoint chunk (see ``lookUpSlot(forKey:)``).
    @inline(never)
    private func unloadedSlot(forKey key: UInt64) throws(EventGraphError) -> Int? {
        for candidate in candidates(for: key) {
            let index = chunksByMinKey[candidate].index
            if let lazy = unloaded[index], lazy.mayHold(key), let position = try lazy.position(of: key) {
                return index * ColumnChunk.slotCapacity + position
            }
        }
        return nil
    }

    /// Starts loading the key directory's place for `key` without waiting for it: a lookup by ID calls this before
    /// it probes the context's registry, so that the two cache misses overlap.
    @inline(__always)
    func prefetchSlot(forKey key: UInt64) { directory.prefetch(key) }

    /// Starts loading, without waiting, what a lookup of `slot` reads and what a read of its `property` reads first
    /// (see ``ColumnChunk/prefetchSlot(of:at:property:)``): a lookup by ID asks for the slot its object is likely at
    /// (``EntityVersionCache/predictedSlot(forKey:)``) before the key directory says where it is. Nothing for a slot
    /// past the resident chunks' slots.
    @inline(__always)
    func prefetchResidentSlot(_ slot: Int, property: Int) {
        guard let (chunk, position) = residentChunkInPlace(ofSlot: slot) else { return }
        ColumnChunk.prefetchSlot(of: chunk, at: position, property: property)
    }

    /// Starts loading, without waiting, the bytes of `property`'s string or binary value at `slot` (see
    /// ``Column/prefetchBytes(of:at:)``); nothing past the resident chunks' slots or columns.
    @inline(__always)
    func prefetchResidentBytes(_ slot: Int, property: Int) {
        guard let (chunk, position) = residentChunkInPlace(ofSlot: slot) else { return }
        ColumnChunk.prefetchBytes(of: chunk, at: position, property: property)
    }

    /// The resident chunk that holds `slot`, in place in its array, and the slot's position there; `nil` past the
    /// resident chunks. For a prefetch, which uses the address at once while this version is held: a chunk read out
    /// of the array is a copy (a retain of each of its storages).
    @inline(__always)
    private func residentChunkInPlace(ofSlot slot: Int) -> (chunk: UnsafePointer<ColumnChunk>, position: Int)? {
        let index = slot / ColumnChunk.slotCapacity
        guard slot >= 0, index < resident.count, let chunks = resident.withUnsafeBufferPointer({ $0.baseAddress })
        else { return nil }
        return (chunks + index, slot % ColumnChunk.slotCapacity)
    }

    /// The slot of a key whose chunk is in memory (the directory holds the keys of resident chunks only).
    @inline(__always)
    func directoryHit(_ key: UInt64) -> Int? { directory[key] }

    /// The largest key an unloaded chunk may hold.
    var unloadedMaxKeyForLookup: UInt64 { unloadedMaxKey }

    /// A resident live slot holding `key` as a reader holds it, read from the chunk in place (not copied out of the
    /// array).
    /// A property at `prefetchingProperty` (-1 for none) starts loading first (see
    /// ``ColumnChunk/prefetchValue(ofProperty:at:)``).
    @inline(__always)
    func residentCommittedRow(atSlot slot: Int, key: UInt64, prefetchingProperty property: Int = -1) -> CommittedRow {
        let index = slot / ColumnChunk.slotCapacity
        precondition(unloaded[index] == nil, "slot \(slot) of entity #\(entityIndex) is in a chunk on disk")
        let position = slot % ColumnChunk.slotCapacity
        if property >= 0 { resident[index].prefetchValue(ofProperty: property, at: position) }
        return resident[index].committedRow(at: position, entityIndex: entityIndex, key: key)
    }

    /// ``committedRowAndChunk(inMemoryForKey:)`` with the chunk's columns seen through `view` (given the chunk's
    /// index and its columns): a coordinator's columns with their references renumbered, which the slot then reads,
    /// so that no slot of the store's own columns is made and replaced.
    @inline(__always)
    func committedRow(
        inMemoryForKey key: UInt64, viewingColumns view: (_ chunkIndex: Int, _ columns: [Column]) -> [Column]
    ) -> InMemoryLookup {
        guard let slot = directoryHit(key) else {
            return hasUnloadedChunks && key <= unloadedMaxKeyForLookup ? .mayBeOnDisk : .absent
        }
        let index = slot / ColumnChunk.slotCapacity
        precondition(unloaded[index] == nil, "slot \(slot) of entity #\(entityIndex) is in a chunk on disk")
        let columns = view(index, resident[index].columns)
        return .found(
            resident[index].committedRow(
                at: slot % ColumnChunk.slotCapacity, entityIndex: entityIndex, key: key, readingColumns: columns))
    }

    /// The positions in ``chunksByMinKey`` of the checkpoint chunks whose key ranges may include `key`, in chunk
    /// order when they overlap: with disjoint ranges, the one chunk whose smallest key is the largest not above
    /// `key` (a binary search; the caller still checks its largest key and whether it is unloaded), else all.
    func candidates(for key: UInt64) -> Range<Int> {
        guard chunkRangesAreDisjoint else { return chunksByMinKey.indices }
        var low = 0
        var high = chunksByMinKey.count
        while low < high {
            let middle = (low + high) / 2
            if chunksByMinKey[middle].minKey <= key { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? 0..<0 : low - 1..<low
    }

    /// The row of a live object (values copied), its chunk read with ``loadedChunk(at:)``.
    ///
    /// - Throws: the error of a checkpoint chunk that may hold the key and cannot be loaded.
    func loadedRow(forKey key: UInt64) throws(EventGraphError) -> Row? {
        guard let slot = try lookUpSlot(forKey: key) else { return nil }
        return try loadedChunk(at: slot / ColumnChunk.slotCapacity).row(
            at: slot % ColumnChunk.slotCapacity, entityIndex: entityIndex)
    }

    func row(forKey key: UInt64) -> Row? {
        slot(forKey: key).map { row(atSlot: $0) }
    }

    /// The row of a live object with only `properties` decoded; the others read as null. For code that reads a
    /// few values of the row it replaces (the indexes' old entries), without decoding its strings and lists.
    func row(forKey key: UInt64, decoding properties: [Int]) -> Row? {
        guard let slot = slot(forKey: key) else { return nil }
        return chunk(at: slot / ColumnChunk.slotCapacity).row(
            at: slot % ColumnChunk.slotCapacity, entityIndex: entityIndex, decoding: properties)
    }

    /// The value of one property of a live object, decoded alone (no row built): for checks that read one value of
    /// many objects (`egctl verify`'s inverses). `nil` when the object is not live or its row lacks the property.
    func value(ofProperty property: Int, forKey key: UInt64) -> PropertyValue? {
        guard let slot = slot(forKey: key) else { return nil }
        let chunk = chunk(at: slot / ColumnChunk.slotCapacity)
        let position = slot % ColumnChunk.slotCapacity
        guard property < Int(chunk.valueCounts[position]) else { return nil }
        return chunk.columns[property].value(at: position) ?? .attribute(.null)
    }

    /// The row of a live slot.
    func row(atSlot slot: Int) -> Row {
        chunk(at: slot / ColumnChunk.slotCapacity).row(
            at: slot % ColumnChunk.slotCapacity, entityIndex: entityIndex)
    }

    /// The rows of some live slots in commit order (slot order), each once however often it is listed: handles that
    /// read their values from the chunks (see ``Row``).
    func rows(atSlots slots: [Int]) -> [Row] {
        var rows: [Row] = []
        rows.reserveCapacity(slots.count)
        var previous = -1
        // Consecutive slots are mostly in one chunk: it is taken once per run, not once per row.
        var chunkIndex = -1
        var chunk = ColumnChunk.unloaded
        for slot in slots.sorted() where slot != previous {
            if slot / ColumnChunk.slotCapacity != chunkIndex {
                chunkIndex = slot / ColumnChunk.slotCapacity
                chunk = self.chunk(at: chunkIndex)
            }
            rows.append(chunk.rowHandle(at: slot % ColumnChunk.slotCapacity, entityIndex: entityIndex))
            previous = slot
        }
        return rows
    }
}
