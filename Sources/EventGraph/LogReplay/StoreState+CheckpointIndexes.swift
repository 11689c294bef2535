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
        var result: [(IndexChunks, [CheckpointIndexChunk])] = []
        for entityIndex in entities.sorted() {
            let entity = model.entities[entityIndex]
            func isOrdered(_ property: Int) -> Bool {
                guard case .attribute(let attribute) = entity.properties[property] else { return false }
                return !attribute.isTransient && AttributeIndex.canIndex(attribute.type.attributeType)
            }
            var described: [(IndexChunks, [Int])] = []
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
                        constraint.propertyIndices
                    ))
            }
            for property in entity.indexedPropertyIndices where isOrdered(property) {
                described.append(
                    (
                        IndexChunks(
                            kind: .attribute, entityIndex: UInt32(entityIndex), ownerEntityIndex: UInt32(entityIndex),
                            ordinal: UInt32(property), arity: 1, chunks: []),
                        [property]
                    ))
            }
            described.sort { CheckpointDirectory.precedes($0.0, $1.0) }
            for (index, properties) in described {
                guard let chunks = indexChunks(entityIndex: entityIndex, properties: properties, kind: index.kind)
                else { continue }
                if !chunks.isEmpty { result.append((index, chunks)) }
            }
        }
        return result
    }

    /// The sorted entries of one index in chunks; `nil` when an entry is too large to store.
    private func indexChunks(entityIndex: Int, properties: [Int], kind: CheckpointIndexKind)
        -> [CheckpointIndexChunk]?
    {
        var entries: [CheckpointIndexEntry] = []
        entries.reserveCapacity(objectCount(ofEntity: entityIndex))
        var isStorable = true
        tables[entityIndex].forEachLiveSlot { chunk, position, _ in
            var values: [AttributeValue] = []
            values.reserveCapacity(properties.count)
            for property in properties {
                let value = chunk.attributeValue(at: position, property: property)
                // A uniqueness tuple with a null is never equal to another (as in SQL) and is not indexed; NaN has
                // no place in the order.
                if kind == .unique && value == .null { return }
                guard AttributeIndex.isIndexable(value) else { return }
                values.append(value)
            }
            if values.reduce(0, { $0 + Self.estimatedByteCount($1) }) > Self.maxStoredIndexEntryByteCount {
                isStorable = false
            }
            entries.append(CheckpointIndexEntry(values: values, key: chunk.keys[position]))
        }
        guard isStorable else { return nil }
        // Often already in order (a value that grows with the key, as an identity does): checked in one pass.
        if !entries.indices.dropFirst().allSatisfy({ CheckpointIndex.precedes(entries[$0 - 1], entries[$0]) }) {
            entries.sort(by: CheckpointIndex.precedes)
        }
        var chunks: [CheckpointIndexChunk] = []
        var current: [CheckpointIndexEntry] = []
        var byteCount = 0
        for entry in entries {
            let entryBytes = 10 + entry.values.reduce(0) { $0 + Self.estimatedByteCount($1) }
            if !current.isEmpty
                && (current.count == LogLimits.maxIndexChunkEntryCount
                    || byteCount + entryBytes > Self.indexChunkByteBudget)
            {
                chunks.append(CheckpointIndexChunk(arity: properties.count, entries: current))
                current.removeAll(keepingCapacity: true)
                byteCount = 0
            }
            current.append(entry)
            byteCount += entryBytes
        }
        if !current.isEmpty { chunks.append(CheckpointIndexChunk(arity: properties.count, entries: current)) }
        return chunks
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
