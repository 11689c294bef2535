import LogFormat

/// The indexes a checkpoint stores (format 1.4, `Docs/FileFormat-Checkpoints.md` §7), with the tail since the
/// checkpoint applied on top: a lookup by a unique value reads one index chunk and the found object's entity chunk;
/// an attribute index is built from its stored entries (already sorted) and the deferred changes of the tail.
extension StoreState {
    /// A stored uniqueness index that may hold a tuple, with the version of the index's entity taken with it under
    /// the store's lock: what a lookup reads after letting the lock go (``readStoredUniqueLookups(_:of:)``).
    struct StoredUniqueLookup: Sendable {
        let index: CheckpointIndex
        let constraint: UniqueConstraint
        let version: EntityColumns
    }

    /// The stored uniqueness indexes of `tuple`'s constraint, each with its entity's current version (cheap: no
    /// chunk is read; take it under the store's lock, with ``uniqueIndex``, which is asked first).
    func storedUniqueLookups(of tuple: UniqueKey) -> [StoredUniqueLookup] {
        storedUniqueIndexes.compactMap { index in
            guard let constraint = index.constraint, constraint.entityIndex == tuple.entityIndex,
                constraint.ordinal == tuple.ordinal
            else { return nil }
            return StoredUniqueLookup(index: index, constraint: constraint, version: tables[index.entityIndex])
        }
    }

    /// The holder of a tuple among the checkpoint's stored uniqueness entries that the object still holds, read from
    /// `lookups` (``storedUniqueLookups(of:)``) with no lock held: it reads index chunks and entity chunks, and a
    /// damaged index chunk makes the index rebuild its entries from the entity's chunks (once; see
    /// ``CheckpointIndexReplacement``) — readers and saves go on meanwhile. A key the tail changed or deleted is
    /// not found through its stale entry (its values in the version are checked); a key the tail gave the tuple is
    /// in ``uniqueIndex``, which ``holder(of:)`` asks first.
    ///
    /// - Throws: the error of an entity chunk that cannot be loaded (a found key's, or one the rebuild reads):
    ///   the holder may be in it.
    static func readStoredUniqueLookups(_ lookups: [StoredUniqueLookup], of tuple: UniqueKey)
        throws(EventGraphError) -> UInt64?
    {
        for lookup in lookups {
            for key in try lookup.index.keys(matching: tuple.values) {
                guard let row = try lookup.version.loadedRow(forKey: key),
                    UniqueKey(lookup.constraint, values: row.values) == tuple
                else { continue }
                return key
            }
        }
        return nil
    }

    /// ``readStoredUniqueLookups(_:of:)`` in this state, for a caller that holds the store's lock (a save's
    /// uniqueness checks, before anything of the save is queued).
    ///
    /// - Throws: the error of a chunk that cannot be loaded (the save fails and changes nothing).
    func storedHolder(of tuple: UniqueKey) throws(EventGraphError) -> UInt64? {
        try Self.readStoredUniqueLookups(storedUniqueLookups(of: tuple), of: tuple)
    }

    /// The attribute indexes of a pending entity built from the checkpoint's stored entries and the tail's
    /// deferred changes; `nil` when the entity has no stored indexes for every current index or one of their
    /// chunks is damaged (the caller builds from the chunks then).
    func attributeIndexesFromStoredEntries(ofEntity entityIndex: Int) -> [AttributeIndex]? {
        guard let stored = storedAttributeIndexes[entityIndex] else { return nil }
        var built: [AttributeIndex] = []
        for index in indexes[entityIndex] {
            guard let source = stored.first(where: { $0.propertyIndex == index.propertyIndex }) else { return nil }
            let entries: [CheckpointIndexEntry]
            do {
                entries = try source.allEntries()
            } catch {
                CheckpointIndex.reportFallback(error)
                return nil
            }
            var fresh = AttributeIndex(propertyIndex: index.propertyIndex)
            fresh.rebuild(
                removing: [], inserting: entries.map { AttributeIndex.Entry(value: $0.values[0], key: $0.key) })
            built.append(fresh)
        }
        var indexes = self.indexes
        indexes[entityIndex] = built
        for changes in deferredIndexChanges { changes.apply(to: &indexes, entityIndex: entityIndex) }
        return indexes[entityIndex]
    }

    /// Reads every stored index chunk that building `entities`' attribute indexes will need (outside the state's
    /// lock: each chunk's box has its own); `false` when one is damaged.
    func preloadStoredAttributeIndexes(of entities: [Int]) -> Bool {
        for entityIndex in entities {
            guard let stored = storedAttributeIndexes[entityIndex] else { return false }
            for index in stored {
                do { _ = try index.allEntries() } catch { return false }
            }
        }
        return true
    }

    /// Forgets the stored attribute indexes once no pending entity needs them.
    mutating func dropStoredAttributeIndexesIfDone() {
        guard storedAttributeIndexes.keys.allSatisfy({ !pendingAttributeIndexEntities.contains($0) }) else { return }
        storedAttributeIndexes = [:]
        deferredIndexChanges = []
    }

    /// The unread chunks of the stored indexes (a probe for tests: open reads none).
    var unreadStoredIndexChunkCount: Int {
        storedUniqueIndexes.reduce(0) { $0 + $1.unreadChunkCount }
            + storedAttributeIndexes.values.joined().reduce(0) { $0 + $1.unreadChunkCount }
    }
}
