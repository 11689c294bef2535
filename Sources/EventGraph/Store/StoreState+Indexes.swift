import LogFormat

extension StoreState {
    /// Follows a later schema frame (`model`, after `previous`): the attribute indexes of each entity whose indexed
    /// attributes `model` declares otherwise are replaced by those it declares (built from the tables now, or from
    /// the chunks on first need for an entity whose chunks are still on disk); the uniqueness entries of
    /// constraints `model` declares otherwise than `previous` are built again on first need.
    ///
    /// An entity whose indexed attributes did not change (a schema frame that changes a default or the version
    /// identifier only, or the same schema again) keeps its indexes as they are: built, or still pending with the
    /// checkpoint's stored indexes (format 1.4) and the deferred changes of the tail, so that its first indexed
    /// lookup reads the stored index rather than every chunk of the entity.
    mutating func adoptIndexes(of model: ObjectModel, replacing previous: ObjectModel) {
        guard isIndexed else { return }
        adoptUniqueConstraints(of: model, replacing: previous)
        for entityIndex in model.entities.indices {
            let declared = model.entities[entityIndex].indexedPropertyIndices
            guard declared != previous.entities[entityIndex].indexedPropertyIndices else { continue }
            indexes[entityIndex] = declared.map(AttributeIndex.init(propertyIndex:))
            // The stored indexes and the deferred changes have the old indexes' shape: a pending entity builds
            // from its chunks instead (the deferred changes are applied only with stored indexes, entity by entity).
            storedAttributeIndexes[entityIndex] = nil
            if !pendingAttributeIndexEntities.contains(entityIndex) { rebuildAttributeIndexes(ofEntity: entityIndex) }
        }
        dropStoredAttributeIndexesIfDone()
    }

    /// Follows an entity's own uniqueness constraints that `model` declares otherwise than `previous`. The shape
    /// keeps an entity's constraints as a set, so a later schema frame may declare the same ones in another order,
    /// or a compound one's attributes in another order: the entries (and a checkpoint's stored indexes) are keyed by
    /// the old ordinals and tuples. When the constraints are the same ones (``reordering(of:as:)``), the entries are
    /// renumbered and the stored indexes read in their own order (``CheckpointIndex/storedOrder``), as a model
    /// change does when the store is opened; otherwise they are forgotten, and the entity's family becomes pending:
    /// its entries are built from its rows under `model` on first need.
    private mutating func adoptUniqueConstraints(of model: ObjectModel, replacing previous: ObjectModel) {
        func own(_ model: ObjectModel, _ entityIndex: Int) -> [UniqueConstraint] {
            model.entities[entityIndex].uniqueConstraints.filter { $0.entityIndex == entityIndex }
        }
        var changed = Set(model.entities.indices.filter { own(model, $0) != own(previous, $0) })
        guard !changed.isEmpty else { return }
        for owner in changed.sorted() {
            guard let reordering = Self.reordering(of: own(previous, owner), as: own(model, owner)) else { continue }
            changed.remove(owner)
            adoptReordering(reordering)
        }
        guard !changed.isEmpty else { return }
        uniqueIndex = uniqueIndex.filter { !changed.contains($0.key.entityIndex) }
        storedUniqueIndexes.removeAll { index in index.constraint.map { changed.contains($0.entityIndex) } ?? true }
        for owner in changed { pendingUniqueEntities.formUnion(model.entities[owner].familyIndices) }
    }

    /// For each of an entity's old constraints (by ordinal), the new one over the same attributes and, for each of
    /// its tuple's values, the position of that value in the old tuple; `nil` unless the constraints are the same
    /// ones (each new one covers the attributes of exactly one old one).
    static func reordering(of old: [UniqueConstraint], as new: [UniqueConstraint])
        -> [(old: UniqueConstraint, new: UniqueConstraint, positions: [Int])]?
    {
        guard old.count == new.count else { return nil }
        var result: [(old: UniqueConstraint, new: UniqueConstraint, positions: [Int])] = []
        for constraint in old {
            let attributes = Set(constraint.propertyIndices)
            let matches = new.filter { Set($0.propertyIndices) == attributes }
            guard matches.count == 1, let match = matches.first, match.propertyIndices.count == attributes.count
            else { return nil }
            let positions = match.propertyIndices.compactMap { constraint.propertyIndices.firstIndex(of: $0) }
            result.append((constraint, match, positions))
        }
        guard Set(result.map(\.new.ordinal)).count == new.count else { return nil }
        return result
    }

    /// Renumbers the uniqueness entries and the stored uniqueness indexes of constraints declared in another order
    /// (``reordering(of:as:)``): nothing is built again.
    private mutating func adoptReordering(
        _ reordering: [(old: UniqueConstraint, new: UniqueConstraint, positions: [Int])]
    ) {
        var renumbered: [UniqueKey: UInt64] = [:]
        renumbered.reserveCapacity(uniqueIndex.count)
        for (tuple, key) in uniqueIndex {
            guard
                let found = reordering.first(where: {
                    $0.old.entityIndex == tuple.entityIndex && $0.old.ordinal == tuple.ordinal
                })
            else {
                renumbered[tuple] = key
                continue
            }
            let values = tuple.values
            renumbered[
                UniqueKey(
                    entityIndex: found.new.entityIndex, ordinal: found.new.ordinal,
                    values: found.positions.map { values[$0] })] = key
        }
        uniqueIndex = renumbered
        for position in storedUniqueIndexes.indices {
            guard let constraint = storedUniqueIndexes[position].constraint,
                let found = reordering.first(where: { $0.old == constraint })
            else { continue }
            // The index's own order (the attributes it was written with) stays; only the tuple it is asked with changes.
            let written = storedUniqueIndexes[position].storedPropertyIndices
            let order = written.compactMap { found.new.propertyIndices.firstIndex(of: $0) }
            storedUniqueIndexes[position].constraint = found.new
            storedUniqueIndexes[position].storedOrder = order == Array(order.indices) ? nil : order
        }
    }

    /// Builds every attribute index from the tables (after a checkpoint was loaded row by row), except those of
    /// entities whose indexes are pending (built on first need).
    mutating func rebuildIndexes() {
        for entityIndex in indexes.indices where !pendingAttributeIndexEntities.contains(entityIndex) {
            rebuildAttributeIndexes(ofEntity: entityIndex)
        }
    }

    private mutating func rebuildAttributeIndexes(ofEntity entityIndex: Int) {
        for position in indexes[entityIndex].indices {
            let propertyIndex = indexes[entityIndex][position].propertyIndex
            var entries: [AttributeIndex.Entry] = []
            entries.reserveCapacity(tables[entityIndex].count)
            tables[entityIndex].forEachAttributeValue(property: propertyIndex) { key, value in
                guard case .attribute(let value)? = value else { return }
                entries.append(AttributeIndex.Entry(value: value, key: key))
            }
            indexes[entityIndex][position] = AttributeIndex(propertyIndex: propertyIndex, building: entries)
        }
    }

    /// Leaves every index of a state replayed from the log's first transaction to its first need, as for the
    /// entities of a checkpoint adopted unloaded: its uniqueness entries and attribute indexes are built from the
    /// columns once, when a save, a lookup or a fetch first needs them (``buildPendingUniqueEntries(_:model:)``,
    /// ``buildPendingAttributeIndexes(_:)``), rather than kept up to date through every replayed transaction.
    ///
    /// Keeping them during the replay grew the uniqueness table by doubling, rehashing every tuple each time, and
    /// read each touched object's old values: the open of a log of 1M posts without a checkpoint spent more than a
    /// third of its time there (BENCHMARKS.md, "Open of a log without a checkpoint: indexes on first need").
    mutating func deferIndexes(model: ObjectModel) {
        guard isIndexed else { return }
        for entityIndex in model.entities.indices {
            if !model.entities[entityIndex].uniqueConstraints.isEmpty { pendingUniqueEntities.insert(entityIndex) }
            if !indexes[entityIndex].isEmpty { pendingAttributeIndexEntities.insert(entityIndex) }
        }
    }

    /// The entities among `entities`, and among the families their uniqueness constraints span, whose uniqueness
    /// entries are still pending, in increasing order.
    func pendingUniqueEntities(for entities: some Sequence<Int>, model: ObjectModel) -> [Int] {
        guard !pendingUniqueEntities.isEmpty else { return [] }
        var needed: Set<Int> = []
        for entityIndex in entities {
            for constraint in model.entities[entityIndex].uniqueConstraints {
                needed.formUnion(model.entities[constraint.entityIndex].familyIndices)
            }
        }
        return needed.filter(pendingUniqueEntities.contains).sorted()
    }

    /// Adds the uniqueness entries of some entities whose entries are pending, from their columns (every chunk of
    /// theirs is read: the caller loaded and pinned them first, see `Store.buildPendingUniqueEntries(for:)`).
    mutating func buildPendingUniqueEntries(_ entities: [Int], model: ObjectModel) {
        for entityIndex in entities where pendingUniqueEntities.remove(entityIndex) != nil {
            let constraints = model.entities[entityIndex].uniqueConstraints
            guard !constraints.isEmpty else { continue }
            uniqueIndex.reserveCapacity(uniqueIndex.count + tables[entityIndex].count * constraints.count)
            tables[entityIndex].forEachLiveSlot { chunk, position, _ in
                for constraint in constraints {
                    // Nulls are never equal (as in SQL): a tuple with one is not indexed.
                    guard let tuple = UniqueKey(constraint, value: { chunk.attributeValue(at: position, property: $0) })
                    else { continue }
                    uniqueIndex[tuple] = chunk.keys[position]
                }
            }
        }
    }

    /// Builds the attribute indexes of some entities whose indexes are pending, from their columns.
    mutating func buildPendingAttributeIndexes(_ entities: [Int]) {
        for entityIndex in entities where pendingAttributeIndexEntities.remove(entityIndex) != nil {
            if let stored = attributeIndexesFromStoredEntries(ofEntity: entityIndex) {
                indexes[entityIndex] = stored
            } else {
                rebuildAttributeIndexes(ofEntity: entityIndex)
            }
        }
        dropStoredAttributeIndexesIfDone()
    }

    /// What an index lookup of one entity reads, taken out of the state: a store takes it under its lock, with the
    /// entity's version, and searches after the lock is let go; `nil` while the entity's indexes are pending.
    func attributeIndexLookup(ofEntity entityIndex: Int) -> AttributeIndexLookup? {
        guard !pendingAttributeIndexEntities.contains(entityIndex) else { return nil }
        return AttributeIndexLookup(indexes: indexes[entityIndex], objectCount: tables[entityIndex].count)
    }
}

/// The attribute indexes of one entity as one version of the state holds them, searched without the store's lock.
///
/// The indexes are values whose entries are shared copy-on-write: holding them costs one retain, and a commit made
/// meanwhile copies what it changes instead of changing what this lookup reads (the key directory's shards work
/// the same way). A lookup holds them only while it searches.
struct AttributeIndexLookup {
    let indexes: [AttributeIndex]
    /// The number of objects of the entity in the same version.
    let objectCount: Int

    /// The keys the best of the indexes finds for `ranges`, then `extraKeys`; `nil` when no range has an index, or
    /// when each holds more than `limitFraction` of the objects (a scan is then as cheap).
    func keys(
        in ranges: [(propertyIndex: Int, range: IndexRange)], appending extraKeys: [UInt64], limitFraction: Int
    ) -> [UInt64]? {
        var best: [UInt64]?
        for (propertyIndex, range) in ranges {
            guard let index = indexes.first(where: { $0.propertyIndex == propertyIndex }) else { continue }
            let limit = min(best?.count ?? Int.max, max(16, objectCount / limitFraction))
            if let keys = index.keys(in: range, limit: limit) { best = keys }
        }
        guard var keys = best else { return nil }
        keys.append(contentsOf: extraKeys)
        return keys
    }
}

/// The index entries one commit removes and inserts, collected so each index applies them as one batch.
struct IndexChanges: Sendable {
    /// Per entity, per index: removals and insertions. Empty until the first change is recorded: most replayed
    /// transactions change no indexed value (a post's title), and this is made once per transaction.
    private var changes: [[(removals: [AttributeIndex.Entry], insertions: [AttributeIndex.Entry])]] = []
    private var isEmpty = true

    /// Changes for `indexes` (laid out by them when the first change is recorded, from the same indexes).
    init(_ indexes: [[AttributeIndex]]) {}

    mutating func record(entityIndex: Int, key: UInt64, old: Row?, new: Row?, indexes: [[AttributeIndex]]) {
        let entityIndexes = indexes[entityIndex]
        guard !entityIndexes.isEmpty else { return }
        // The same row on both sides (an update that wrote no indexed property) changes nothing.
        if let old, let new, old === new { return }
        for (position, index) in entityIndexes.enumerated() {
            let property = index.propertyIndex
            let oldValue = old.flatMap { row -> AttributeValue? in
                if case .attribute(let value) = row.values[property] { value } else { nil }
            }
            let newValue = new.flatMap { row -> AttributeValue? in
                if case .attribute(let value) = row.values[property] { value } else { nil }
            }
            if oldValue == newValue { continue }
            if isEmpty {
                isEmpty = false
                if changes.isEmpty { changes = indexes.map { Array(repeating: ([], []), count: $0.count) } }
            }
            if let oldValue { changes[entityIndex][position].removals.append(.init(value: oldValue, key: key)) }
            if let newValue { changes[entityIndex][position].insertions.append(.init(value: newValue, key: key)) }
        }
    }

    /// Whether it holds any change.
    var hasChanges: Bool { !isEmpty }

    /// Applies the changes of one entity only (a pending entity's deferred changes, once its index is built).
    func apply(to indexes: inout [[AttributeIndex]], entityIndex: Int) {
        guard !isEmpty, entityIndex < changes.count, changes[entityIndex].count == indexes[entityIndex].count else {
            return
        }
        for position in changes[entityIndex].indices {
            let change = changes[entityIndex][position]
            guard !change.removals.isEmpty || !change.insertions.isEmpty else { continue }
            indexes[entityIndex][position].apply(removing: change.removals, inserting: change.insertions)
        }
    }

    func apply(to indexes: inout [[AttributeIndex]]) {
        guard !isEmpty else { return }
        for entityIndex in changes.indices {
            for position in changes[entityIndex].indices {
                let change = changes[entityIndex][position]
                guard !change.removals.isEmpty || !change.insertions.isEmpty else { continue }
                indexes[entityIndex][position].apply(removing: change.removals, inserting: change.insertions)
            }
        }
    }
}
