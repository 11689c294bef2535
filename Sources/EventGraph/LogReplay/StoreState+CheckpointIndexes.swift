import LogFormat

extension StoreState {
    /// The most bytes of entries (estimated, never below the encoding) in one stored index chunk: a lookup reads
    /// one chunk, so chunks stay small.
    static let indexChunkByteBudget = 256 << 10
    /// The largest entry a stored index holds; an index with a larger value is not stored (its entity's index is
    /// built from the chunks on first need, as for a 1.3 checkpoint).
    static let maxStoredIndexEntryByteCount = 16 << 10

    /// The indexes a checkpoint stores for the entities written as entity chunks (format 1.4,
    /// `Docs/FileFormat-Checkpoints.md` §7): each uniqueness constraint and each attribute index of those entities
    /// whose values all have an order, as sorted runs of (values, key) split into chunks of at most
    /// ``LogLimits/maxIndexChunkEntryCount`` entries and ``indexChunkByteBudget`` bytes. Computed from the rows (the
    /// caller loaded every chunk), so the stored entries are exactly the checkpoint's objects.
    func checkpointIndexChunks(model: ObjectModel, entities: Set<Int>) -> [(IndexChunks, [CheckpointIndexChunk])] {
        builtCheckpointIndexes(model: model, entities: entities).map { ($0.index, $0.chunks) }
    }

    /// The indexes ``checkpointIndexChunks(model:entities:)`` gives, each as its sorted entries and the bounds of its
    /// chunks: a compaction makes each chunk only as it encodes it (``BuiltCheckpointIndex/chunk(_:)``), on the
    /// worker that encodes it, instead of holding a copy of every chunk besides the entries.
    ///
    /// - Parameter copyingStored: for an entity none of whose objects changed since the checkpoint this version was
    ///   read from (every chunk is still that checkpoint's), an index that checkpoint stored, which this version
    ///   still reads (``storedIndexFrames``), is given as its stored chunks (``BuiltCheckpointIndex/stored``), read
    ///   again and verified, instead of being built: the entries would be the same. One whose chunks do not verify
    ///   is built.
    func builtCheckpointIndexes(model: ObjectModel, entities: Set<Int>, copyingStored: Bool = false)
        -> [BuiltCheckpointIndex]
    {
        var result: [BuiltCheckpointIndex] = []
        for entityIndex in entities.sorted() {
            let entity = model.entities[entityIndex]
            let table = tables[entityIndex]
            let isUnchanged =
                copyingStored && table.chunkCount > 0
                && (0..<table.chunkCount).allSatisfy { table.checkpointChunk(at: $0) != nil }
            func isOrdered(_ property: Int) -> Bool {
                guard case .attribute(let attribute) = entity.properties[property] else { return false }
                return !attribute.isTransient && AttributeIndex.canIndex(attribute.type.attributeType)
            }
            var described: [(IndexChunks, [Int], UniqueConstraint?)] = []
            for constraint in entity.uniqueConstraints
            where constraint.propertyIndices.allSatisfy(isOrdered)
                && constraint.propertyIndices.count <= LogLimits.maxIndexArity
            {
                described.append(
                    (
                        IndexChunks(
                            kind: .unique, entityIndex: UInt32(entityIndex),
                            ownerEntityIndex: UInt32(constraint.entityIndex), ordinal: UInt32(constraint.ordinal),
                            arity: UInt32(constraint.propertyIndices.count), chunks: []),
                        constraint.propertyIndices, constraint
                    ))
            }
            for property in entity.indexedPropertyIndices where isOrdered(property) {
                described.append(
                    (
                        IndexChunks(
                            kind: .attribute, entityIndex: UInt32(entityIndex), ownerEntityIndex: UInt32(entityIndex),
                            ordinal: UInt32(property), arity: 1, chunks: []),
                        [property], nil
                    ))
            }
            described.sort { CheckpointDirectory.precedes($0.0, $1.0) }
            for (index, properties, constraint) in described {
                if isUnchanged,
                    let frames = storedIndexFrames(
                        entityIndex: entityIndex, constraint: constraint, property: properties[0]),
                    let chunks = frames.storedChunks()
                {
                    result.append(
                        BuiltCheckpointIndex(
                            index: index, arity: properties.count, keys: [], values: [], chunkRanges: [],
                            stored: chunks))
                    continue
                }
                guard let built = indexEntries(of: index, entityIndex: entityIndex, properties: properties)
                else { continue }
                if !built.chunkRanges.isEmpty { result.append(built) }
            }
        }
        return result
    }

    /// Where the checkpoint this version was read from stored the index of `entityIndex`'s objects for a
    /// uniqueness constraint (`constraint`), or else for its attribute `property`.
    private func storedIndexFrames(entityIndex: Int, constraint: UniqueConstraint?, property: Int) -> StoredIndexFrames?
    {
        storedIndexFrames[entityIndex]?.first { frames in
            if let constraint { return frames.kind == .unique && frames.constraint == constraint }
            return frames.kind == .attribute && frames.propertyIndex == property
        }
    }

    /// The sorted entries of one index and the bounds of its chunks; `nil` when an entry is too large to store. The
    /// entries are held flat (a key array and a value array, `properties.count` values per key), as the chunks hold
    /// them: no array per entry for a million-object entity.
    private func indexEntries(of index: IndexChunks, entityIndex: Int, properties: [Int]) -> BuiltCheckpointIndex? {
        let kind = index.kind
        let arity = properties.count
        var keys: [UInt64] = []
        var values: [AttributeValue] = []
        keys.reserveCapacity(objectCount(ofEntity: entityIndex))
        values.reserveCapacity(objectCount(ofEntity: entityIndex) * arity)
        var isStorable = true
        tables[entityIndex].forEachLiveSlot { chunk, position, _ in
            var byteCount = 0
            for property in properties {
                let value = chunk.attributeValue(at: position, property: property)
                // A uniqueness tuple with a null is never equal to another (as in SQL) and is not indexed; NaN has
                // no place in the order.
                guard !(kind == .unique && value == .null), AttributeIndex.isIndexable(value) else {
                    values.removeLast(values.count - keys.count * arity)
                    return
                }
                byteCount += Self.estimatedByteCount(value)
                values.append(value)
            }
            if byteCount > Self.maxStoredIndexEntryByteCount { isStorable = false }
            keys.append(chunk.keys[position])
        }
        guard isStorable else { return nil }
        Self.sortIndexEntries(keys: &keys, values: &values, arity: arity)
        var chunkRanges: [Range<Int>] = []
        var start = 0
        var byteCount = 0
        func cut(at end: Int) {
            chunkRanges.append(start..<end)
            start = end
            byteCount = 0
        }
        for entry in keys.indices {
            var entryBytes = 10
            for offset in 0..<arity { entryBytes += Self.estimatedByteCount(values[entry * arity + offset]) }
            if entry > start
                && (entry - start == LogLimits.maxIndexChunkEntryCount
                    || byteCount + entryBytes > Self.indexChunkByteBudget)
            {
                cut(at: entry)
            }
            byteCount += entryBytes
        }
        if start < keys.count { cut(at: keys.count) }
        return BuiltCheckpointIndex(index: index, arity: arity, keys: keys, values: values, chunkRanges: chunkRanges)
    }

    /// Puts flat index entries (`arity` values per key) in the index's order (``CheckpointIndex/precedes(_:_:_:_:)``).
    private static func sortIndexEntries(keys: inout [UInt64], values: inout [AttributeValue], arity: Int) {
        let order: [Int]? = values.withUnsafeBufferPointer { values in
            keys.withUnsafeBufferPointer { keys in
                // Read through pointers: a slice of the arrays per comparison would retain and release them.
                func precedes(_ a: Int, _ b: Int) -> Bool {
                    CheckpointIndex.precedes(
                        values[a * arity..<(a + 1) * arity], keys[a], values[b * arity..<(b + 1) * arity], keys[b])
                }
                // Often already in order (a value that grows with the key, as an identity does): checked in one pass.
                if keys.indices.dropFirst().allSatisfy({ precedes($0 - 1, $0) }) { return nil }
                return keys.indices.sorted(by: precedes)
            }
        }
        guard let order else { return }
        keys = order.map { keys[$0] }
        var sorted: [AttributeValue] = []
        sorted.reserveCapacity(values.count)
        for entry in order { sorted.append(contentsOf: values[entry * arity..<(entry + 1) * arity]) }
        values = sorted
    }

    /// An estimate of a value's encoded size that is never below it.
    private static func estimatedByteCount(_ value: AttributeValue) -> Int {
        switch value {
        case .string(let s), .url(let s), .decimal(let s): 11 + s.utf8.count
        case .binary(let b), .transformable(let b): 11 + b.count
        default: 18
        }
    }
}

/// One stored index as a compaction builds it (``StoreState/builtCheckpointIndexes(model:entities:)``): its entries
/// flat and in the index's order, `arity` values per key, and the entries of each of its chunks.
///
/// A chunk is copied out of the entries only when it is asked for (``chunk(_:)``): the writer makes each on the
/// worker that encodes it and lets it go once encoded, so the copies reuse that worker's memory. Copies of all the
/// chunks, made at once beside the entries, took fresh pages for every one (the kernel's page clearing was most of
/// the index build's time in h104's profile of a 1M-post compaction).
struct BuiltCheckpointIndex: Sendable {
    /// The index as the directory lists it (its chunks left empty).
    var index: IndexChunks
    var arity: Int
    var keys: [UInt64]
    var values: [AttributeValue]
    /// The entries of each chunk, in order: consecutive, together all of them.
    var chunkRanges: [Range<Int>]
    /// The old checkpoint's chunks of the index, read and verified, when they are copied instead of built (then the
    /// entries are empty; see ``StoreState/builtCheckpointIndexes(model:entities:copyingStored:)``).
    var stored: [StoredIndexChunk]? = nil

    /// How many chunks the index is written as.
    var chunkCount: Int { stored?.count ?? chunkRanges.count }

    /// Chunk `position` as the writer takes it: copied as stored, or made from the entries.
    func content(_ position: Int) -> IndexChunkContent {
        if let stored { return .stored(stored[position]) }
        return .built(chunk(position))
    }

    /// Chunk `position` of the index.
    func chunk(_ position: Int) -> CheckpointIndexChunk {
        let range = chunkRanges[position]
        return CheckpointIndexChunk(
            arity: arity, keys: Array(keys[range]),
            values: Array(values[range.lowerBound * arity..<range.upperBound * arity]))
    }

    /// Every chunk of the index, in order (of an index built, not copied).
    var chunks: [CheckpointIndexChunk] {
        precondition(stored == nil, "the chunks of a copied index are stored bytes, not entries")
        return chunkRanges.indices.map(chunk)
    }
}
