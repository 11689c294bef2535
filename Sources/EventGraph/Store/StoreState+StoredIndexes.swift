import LogFormat

/// The indexes a checkpoint stores (format 1.4, `Docs/FileFormat-Checkpoints.md` §7), with the tail since the
/// checkpoint applied on top: a lookup by a unique value reads one index chunk and the found object's entity chunk;
/// an attribute index is built from its stored entries (already sorted) and the deferred changes of the tail.
extension StoreState {
    /// The holder of a tuple among the checkpoint's stored uniqueness entries that the object still holds. A key
    /// the tail changed or deleted is not found through its stale entry (its current values are checked); a key the
    /// tail gave the tuple is in ``uniqueIndex``, which ``holder(of:)`` asks first.
    func storedHolder(of tuple: UniqueKey) -> UInt64? {
        for index in storedUniqueIndexes {
            guard let constraint = index.constraint, constraint.entityIndex == tuple.entityIndex,
                constraint.ordinal == tuple.ordinal
            else { continue }
            // A damaged index chunk is answered from the entity's chunks (never a wrong answer, never a crash):
            // the index's entries are rebuilt from them once, and the damage is reported once.
            for key in index.keys(matching: tuple.values) {
                guard let row = row(entityIndex: index.entityIndex, key: key),
                    UniqueKey(constraint, values: row.values) == tuple
                else { continue }
                return key
            }
        }
        return nil
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
