import LogFormat

extension StoreState {
    /// Installs staged rows: the tables, the uniqueness index and the attribute indexes.
    ///
    /// - Parameter newTuples: for a save whose objects are all new (a staged insertion), the unique tuples of its
    ///   rows, each with the key of the object that takes it (its uniqueness check's table): they go into the
    ///   uniqueness index as they are — the whole table when the index is empty — instead of each row's tuples being
    ///   built again, and no old row is looked up.
    mutating func install(_ staged: StagedChanges, model: ObjectModel, newTuples: [UniqueKey: UInt64]? = nil) {
        var indexChanges = IndexChanges(indexes)
        var deferred: IndexChanges?
        let takesTuples = newTuples != nil && isIndexed
        if takesTuples, let newTuples {
            if uniqueIndex.isEmpty && pendingUniqueEntities.isEmpty {
                uniqueIndex = newTuples
            } else {
                uniqueIndex.reserveCapacity(uniqueIndex.count + newTuples.count)
                for (tuple, key) in newTuples where !pendingUniqueEntities.contains(tuple.entityIndex) {
                    uniqueIndex[tuple] = key
                }
            }
        }
        if staged.count > 64 {
            // Grow every table and the uniqueness index once, not by doubling along the way.
            var added = Array(repeating: 0, count: tables.count)
            for change in staged.changes where change.row != nil { added[change.entityIndex] += 1 }
            for (entityIndex, count) in added.enumerated() where count > 0 {
                reserveCapacity(ofEntity: entityIndex, adding: count)
            }
            if !takesTuples, keepsUniqueEntries(model: model) {
                uniqueIndex.reserveCapacity(uniqueIndex.count + staged.count)
            }
        }
        // Per entity, the properties whose old values an install reads (see `oldValuesNeeded(ofEntity:model:)`).
        var neededProperties: [[Int]?] = Array(repeating: nil, count: tables.count)
        // A large save of new objects: per entity, its new rows, appended after this pass column by column on every
        // core (see `ColumnChunk.appendInserted`) instead of row by row on one.
        var insertedRows: [[InsertedRow]]? =
            takesTuples && staged.count >= Self.columnWiseInstallMinimum
            ? Array(repeating: [], count: tables.count) : nil
        // `staged` is alive and unchanged for the pass: its elements are read in place by the prefetches.
        let elements = SavePrefetch.elements(of: staged.changes)
        for (position, change) in staged.changes.enumerated() {
            // Asked for a few rows ahead: each new row, its values, their strings' bytes and to-many lists, which
            // the columns copy and a bulk save finds cold (see `SavePrefetch`). The values of rows appended later are
            // not read in this pass: the column writes and the index task read them.
            let readsValues = insertedRows == nil
            SavePrefetch.prefetchAhead(in: elements, from: position, lists: readsValues, strings: readsValues)
            let (key, entityIndex, newRow) = (change.key, change.entityIndex, change.row)
            if neededProperties[entityIndex] == nil {
                neededProperties[entityIndex] = oldValuesNeeded(ofEntity: entityIndex, model: model)
            }
            if insertedRows != nil, let newRow, case .inserted(let values) = newRow.values.storage,
                tables[entityIndex].slot(forKey: key) == nil
            {
                // Its index changes are recorded beside the column writes (below); it holds no unique tuple here
                // (the uniqueness index took the save's already).
                insertedRows![entityIndex].append(InsertedRow(row: newRow, values: values))
                continue
            }
            // Only the values the uniqueness and attribute indexes read are decoded from the row being replaced (a
            // post's body and a tag's list of every post are not), and none when the entity has neither.
            let needed = neededProperties[entityIndex]!
            let oldRow = needed.isEmpty || takesTuples ? nil : tables[entityIndex].row(forKey: key, decoding: needed)
            updateIndexes(
                entityIndex: entityIndex, key: key, old: oldRow, new: newRow, model: model, changes: &indexChanges,
                deferred: &deferred, uniqueIndexDone: takesTuples)
            if let newRow {
                put(newRow)
            } else {
                removeRow(entityIndex: entityIndex, key: key)
            }
        }
        for (entityIndex, rows) in (insertedRows ?? []).enumerated() where !rows.isEmpty {
            let recording = attributeIndexRecording(of: entityIndex)
            withUnsafeMutablePointer(to: &indexChanges) { changes in
                withUnsafeMutablePointer(to: &deferred) { deferred in
                    let target = IndexChangesTarget(changes: changes, deferred: deferred)
                    rows.withUnsafeBufferPointer { rows in
                        appendInserted(rows, entityIndex: entityIndex) { batch in
                            for inserted in batch { target.record(inserted, with: recording) }
                        }
                    }
                }
            }
        }
        indexChanges.apply(to: &indexes)
        if let deferred, deferred.hasChanges { deferredIndexChanges.append(deferred) }
    }

    /// Where the column-wise install records its new rows' attribute index changes: the install's own tables of
    /// changes, written by the task beside each batch's column writes.
    ///
    /// `@unchecked Sendable`: the batches run one after another, so one task at a time writes them, and the install
    /// reads them only after every batch is done (`DispatchQueue.concurrentPerform` returns after its iterations).
    private struct IndexChangesTarget: @unchecked Sendable {
        let changes: UnsafeMutablePointer<IndexChanges>
        let deferred: UnsafeMutablePointer<IndexChanges?>

        func record(_ inserted: InsertedRow, with recording: AttributeIndexRecording) {
            recording.record(
                key: inserted.key, old: nil, new: inserted.row, changes: &changes.pointee, deferred: &deferred.pointee)
        }
    }

    /// The smallest save of new objects whose rows an install appends column by column (see
    /// ``ColumnChunk/appendInserted(_:alongside:)``): below it, the rows are written one by one on one core.
    static let columnWiseInstallMinimum = 1024

    /// Whether some entity with uniqueness constraints has its entries in ``uniqueIndex`` (is indexed and not
    /// pending): otherwise an install adds none, and the index is not grown for it.
    func keepsUniqueEntries(model: ObjectModel) -> Bool {
        isIndexed
            && model.entities.indices.contains { entityIndex in
                !model.entities[entityIndex].uniqueConstraints.isEmpty && !pendingUniqueEntities.contains(entityIndex)
            }
    }

    /// Updates the uniqueness index and records the attribute index changes of one object whose values go from
    /// `old` to `new` (`nil`: absent; either may hold only the values the indexes read).
    ///
    /// - Parameter uniqueIndexDone: the uniqueness index holds the new tuples already (see `install`'s `newTuples`).
    mutating func updateIndexes(
        entityIndex: Int, key: UInt64, old oldRow: Row?, new newRow: Row?, model: ObjectModel,
        changes indexChanges: inout IndexChanges, deferred: inout IndexChanges?, uniqueIndexDone: Bool = false
    ) {
        // An entity whose indexes are pending gets them built from its columns later, changes included.
        let isUniquePending = pendingUniqueEntities.contains(entityIndex)
        let constraints =
            isIndexed && !isUniquePending && !uniqueIndexDone ? model.entities[entityIndex].uniqueConstraints : []
        // Per constraint, the tuple to remove and the one to add; an object whose tuple did not change (an update of
        // other properties: a post's title) keeps its entry, neither removed nor added again. A tuple names its
        // entity and constraint, so the constraints' entries never collide and are handled one at a time (the
        // attribute indexes' changes recorded below do not read this index).
        let isSameRow = oldRow != nil && oldRow === newRow
        for constraint in constraints {
            if isSameRow {
                // One tuple on both sides: kept when this object holds it, given to it otherwise (as below).
                guard let tuple = UniqueKey(constraint, values: oldRow!.values), uniqueIndex[tuple] != key else {
                    continue
                }
                uniqueIndex[tuple] = key
                continue
            }
            let oldTuple = oldRow.flatMap { UniqueKey(constraint, values: $0.values) }
            let newTuple = newRow.flatMap { UniqueKey(constraint, values: $0.values) }
            if let oldTuple, oldTuple == newTuple, uniqueIndex[oldTuple] == key { continue }
            if let oldTuple, uniqueIndex[oldTuple] == key { uniqueIndex[oldTuple] = nil }
            if let newTuple { uniqueIndex[newTuple] = key }
        }
        attributeIndexRecording(of: entityIndex).record(
            key: key, old: oldRow, new: newRow, changes: &indexChanges, deferred: &deferred)
    }

    /// How one entity's changes are recorded for its attribute indexes (see ``AttributeIndexRecording``).
    func attributeIndexRecording(of entityIndex: Int) -> AttributeIndexRecording {
        AttributeIndexRecording(
            entityIndex: entityIndex, indexes: indexes,
            isPending: pendingAttributeIndexEntities.contains(entityIndex),
            hasStoredIndexes: storedAttributeIndexes[entityIndex] != nil)
    }

    /// The properties of one entity whose old values installing a change reads: those of its uniqueness
    /// constraints and of its attribute indexes, when the state keeps them (empty for a tool's state).
    /// An entity's pending indexes read none: they are built from the columns later, changes included (but the
    /// changes deferred for the stored attribute indexes of a checkpoint are recorded with their old values).
    func oldValuesNeeded(ofEntity entityIndex: Int, model: ObjectModel) -> [Int] {
        guard isIndexed else { return [] }
        let constraints =
            pendingUniqueEntities.contains(entityIndex) ? [] : model.entities[entityIndex].uniqueConstraints
        let attributeIndexes =
            pendingAttributeIndexEntities.contains(entityIndex) && storedAttributeIndexes[entityIndex] == nil
            ? [] : indexes[entityIndex]
        guard !constraints.isEmpty || !attributeIndexes.isEmpty else { return [] }
        // Sorted and without repeats; a few properties, so no set (this runs once per replayed transaction).
        var properties: [Int] = []
        func add(_ property: Int) { if !properties.contains(property) { properties.append(property) } }
        for constraint in constraints { for property in constraint.propertyIndices { add(property) } }
        for index in attributeIndexes { add(index.propertyIndex) }
        properties.sort()
        return properties
    }
}

/// Records an entity's changes for its attribute indexes, from what it reads of a state (a value, so that the
/// column-wise install records its new rows' changes on another core while the state's tables are written).
struct AttributeIndexRecording: Sendable {
    let entityIndex: Int
    let indexes: [[AttributeIndex]]
    /// The entity's attribute indexes are built later (from the columns, changes included).
    let isPending: Bool
    /// The checkpoint stores the entity's attribute indexes: a pending entity's changes are replayed on top of them
    /// once they are built.
    let hasStoredIndexes: Bool

    /// Records one object's change from `old` to `new` (`nil`: absent).
    func record(
        key: UInt64, old oldRow: Row?, new newRow: Row?, changes: inout IndexChanges, deferred: inout IndexChanges?
    ) {
        if !isPending {
            changes.record(entityIndex: entityIndex, key: key, old: oldRow, new: newRow, indexes: indexes)
        } else if hasStoredIndexes {
            // Built later from the checkpoint's stored entries: the change is replayed on top then.
            if deferred == nil { deferred = IndexChanges(indexes) }
            deferred!.record(entityIndex: entityIndex, key: key, old: oldRow, new: newRow, indexes: indexes)
        }
    }
}
