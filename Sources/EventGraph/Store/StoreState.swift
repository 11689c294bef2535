import LogFormat

/// The shared committed state of a store: every live row, the counters and the uniqueness index.
struct StoreState: Sendable {
    var tables: [RowTable]
    var lastTransactionID: UInt64 = 0
    var lastCommitTimeMicroseconds: Int64 = 0
    /// The next key the store will allocate (persisted in every changeset and checkpoint).
    var nextKey: UInt64 = 1
    /// Where each externally stored value is, by its logical reference: only the values the live state references
    /// after a compaction (which drops the others from the log), plus those of later saves.
    var blobHandles: [BlobKey: UInt64] = [:]
    /// The log generation (see ``LogBackend``) the handles belong to.
    var blobGeneration: UInt64 = 0
    /// For each uniqueness constraint, the holder of each value tuple.
    var uniqueIndex: [UniqueKey: UInt64] = [:]
    /// For each entity, a sorted index of each indexed attribute over the entity's own rows.
    var indexes: [[AttributeIndex]]

    init(model: ObjectModel) {
        tables = Array(repeating: RowTable(), count: model.entities.count)
        indexes = model.entities.map { entity in entity.indexedPropertyIndices.map(AttributeIndex.init(propertyIndex:))
        }
    }

    func row(entityIndex: Int, key: UInt64) -> Row? {
        tables[entityIndex].row(forKey: key)
    }

    var objectCount: Int { tables.reduce(0) { $0 + $1.count } }
}

/// One tuple of a uniqueness constraint.
struct UniqueKey: Hashable, Sendable {
    var entityIndex: Int
    var ordinal: Int
    /// The first value, and the others of a compound constraint (kept apart so a one-attribute tuple allocates
    /// nothing).
    private var first: AttributeValue
    private var rest: [AttributeValue]

    var values: [AttributeValue] { [first] + rest }

    init(entityIndex: Int, ordinal: Int, values: [AttributeValue]) {
        precondition(!values.isEmpty, "a uniqueness tuple needs at least one value")
        self.entityIndex = entityIndex
        self.ordinal = ordinal
        self.first = values[0]
        self.rest = values.count > 1 ? Array(values.dropFirst()) : []
    }

    /// The tuple of a row for a constraint; `nil` when a value is null (nulls are never equal, as in SQL).
    init?(_ constraint: UniqueConstraint, values rowValues: [PropertyValue]) {
        let indices = constraint.propertyIndices
        guard case .attribute(let first) = rowValues[indices[0]], first != .null else { return nil }
        var rest: [AttributeValue] = []
        if indices.count > 1 {
            rest.reserveCapacity(indices.count - 1)
            for index in indices.dropFirst() {
                guard case .attribute(let value) = rowValues[index], value != .null else { return nil }
                rest.append(value)
            }
        }
        self.entityIndex = constraint.entityIndex
        self.ordinal = constraint.ordinal
        self.first = first
        self.rest = rest
    }
}

/// The rows a changeset produces, computed before anything is installed.
struct StagedChanges {
    /// Final row (or `nil` for deleted) of every object the changeset touches, by key.
    var rows: [UInt64: (entityIndex: Int, row: Row?)] = [:]
    /// Keys in first-touch order, so installation is deterministic.
    var order: [UInt64] = []
}

extension StoreState {
    /// Computes the rows a changeset produces without changing the state.
    ///
    /// - Throws: when an operation names an object that does not exist (or already exists, for an insert).
    /// - Parameters:
    ///   - overlay: rows of saves queued before this one and not yet installed, which take precedence.
    ///   - insertDefaults: per entity, the values of properties an insert leaves out (replay passes those of the
    ///     schema frame in force); `nil` takes the model's defaults.
    func stage(
        _ changeset: Changeset, model: ObjectModel, overlay: [UInt64: CommitQueue.OverlayRow] = [:],
        insertDefaults: [[PropertyValue]]? = nil
    ) throws(EventGraphError) -> StagedChanges {
        func row(entityIndex: Int, key: UInt64) -> Row? {
            if !overlay.isEmpty, let entry = overlay[key] { return entry.entityIndex == entityIndex ? entry.row : nil }
            return self.row(entityIndex: entityIndex, key: key)
        }
        var staged = StagedChanges()
        staged.rows.reserveCapacity(changeset.operations.count)
        staged.order.reserveCapacity(changeset.operations.count)
        let version = changeset.transactionID
        func current(_ reference: ObjectReference) throws(EventGraphError) -> Row {
            let entityIndex = Int(reference.entityIndex)
            guard entityIndex < tables.count else {
                throw EventGraphError(
                    .log, "transaction \(version) names entity #\(entityIndex), which the model lacks")
            }
            if let entry = staged.rows[reference.key] {
                guard let row = entry.row else {
                    throw EventGraphError(
                        .log, "transaction \(version) changes object \(reference.key) after deleting it")
                }
                return row
            }
            guard let row = row(entityIndex: entityIndex, key: reference.key) else {
                throw EventGraphError(
                    .log,
                    "transaction \(version) changes \(model.entities[entityIndex].name) \(reference.key), which does not exist"
                )
            }
            return row
        }
        func put(_ key: UInt64, _ entityIndex: Int, _ row: Row?) {
            if staged.rows.updateValue((entityIndex, row), forKey: key) == nil { staged.order.append(key) }
        }
        func applied(_ changes: [PropertyChange], to values: inout [PropertyValue]) throws(EventGraphError) {
            for change in changes {
                guard change.propertyIndex < values.count else {
                    throw EventGraphError(
                        .log, "transaction \(version) names property #\(change.propertyIndex), which the entity lacks")
                }
                values[Int(change.propertyIndex)] = change.value
            }
        }
        for operation in changeset.operations {
            switch operation {
            case .insert(let reference, let changes):
                let entityIndex = Int(reference.entityIndex)
                guard entityIndex < tables.count else {
                    throw EventGraphError(
                        .log, "transaction \(version) inserts into entity #\(entityIndex), which the model lacks")
                }
                guard staged.rows[reference.key] == nil, row(entityIndex: entityIndex, key: reference.key) == nil else {
                    throw EventGraphError(.log, "transaction \(version) inserts object \(reference.key) twice")
                }
                var values = insertDefaults?[entityIndex] ?? model.entities[entityIndex].defaultValues
                try applied(changes, to: &values)
                put(
                    reference.key, entityIndex,
                    Row(entityIndex: entityIndex, key: reference.key, version: version, values: values))
            case .update(let reference, let changes):
                let base = try current(reference)
                var values = base.values
                try applied(changes, to: &values)
                put(
                    reference.key, base.entityIndex,
                    Row(entityIndex: base.entityIndex, key: reference.key, version: version, values: values))
            case .relate(let reference, let propertyIndex, let added, let removed):
                let base = try current(reference)
                var values = base.values
                guard Int(propertyIndex) < values.count, case .toMany(var targets) = values[Int(propertyIndex)] else {
                    throw EventGraphError(
                        .log, "transaction \(version) relates through property #\(propertyIndex), which is not to-many")
                }
                if !removed.isEmpty {
                    let removedKeys = Set(removed.map(\.key))
                    targets.removeAll { removedKeys.contains($0.key) }
                }
                if !added.isEmpty {
                    // Objects inserted since the list was last written have larger keys than any in it, so the usual
                    // relate is checked against the largest key instead of hashing a list of, say, 100k posts.
                    let largestKey = targets.reduce(0) { Swift.max($0, $1.key) }
                    var present = added.allSatisfy { $0.key > largestKey } ? [] : Set(targets.map(\.key))
                    for target in added where present.insert(target.key).inserted { targets.append(target) }
                }
                values[Int(propertyIndex)] = .toMany(targets)
                // A relate changes only a to-many list; the version still moves so readers see a new row.
                put(
                    reference.key, base.entityIndex,
                    Row(entityIndex: base.entityIndex, key: reference.key, version: version, values: values))
            case .delete(let reference):
                let base = try current(reference)
                put(reference.key, base.entityIndex, nil)
            }
        }
        return staged
    }

    /// Installs staged rows and advances the counters.
    mutating func install(_ staged: StagedChanges, model: ObjectModel) {
        var indexChanges = IndexChanges(indexes)
        if staged.order.count > 64 {
            // Grow every table and the uniqueness index once, not by doubling along the way.
            var added = Array(repeating: 0, count: tables.count)
            for entry in staged.rows.values where entry.row != nil { added[entry.entityIndex] += 1 }
            for (entityIndex, count) in added.enumerated() where count > 0 {
                tables[entityIndex].reserveCapacity(adding: count)
            }
            if model.entities.contains(where: { !$0.uniqueConstraints.isEmpty }) {
                uniqueIndex.reserveCapacity(uniqueIndex.count + staged.order.count)
            }
        }
        for key in staged.order {
            guard let (entityIndex, newRow) = staged.rows[key] else { continue }
            let entity = model.entities[entityIndex]
            let oldRow = tables[entityIndex].row(forKey: key)
            if let old = oldRow {
                for constraint in entity.uniqueConstraints {
                    if let tuple = UniqueKey(constraint, values: old.values), uniqueIndex[tuple] == key {
                        uniqueIndex[tuple] = nil
                    }
                }
            }
            indexChanges.record(entityIndex: entityIndex, key: key, old: oldRow, new: newRow, indexes: indexes)
            if let newRow {
                tables[entityIndex].put(newRow)
                for constraint in entity.uniqueConstraints {
                    if let tuple = UniqueKey(constraint, values: newRow.values) { uniqueIndex[tuple] = key }
                }
            } else {
                tables[entityIndex].remove(key: key)
            }
        }
        indexChanges.apply(to: &indexes)
    }

    /// Replaces the attribute indexes by those `model` declares (a later schema frame may add or drop some) and
    /// builds them from the tables.
    mutating func adoptIndexes(of model: ObjectModel) {
        indexes = model.entities.map { entity in entity.indexedPropertyIndices.map(AttributeIndex.init(propertyIndex:))
        }
        rebuildIndexes()
    }

    /// Builds every attribute index from the tables (after a checkpoint was loaded row by row).
    mutating func rebuildIndexes() {
        for entityIndex in indexes.indices {
            for position in indexes[entityIndex].indices {
                let propertyIndex = indexes[entityIndex][position].propertyIndex
                var entries: [AttributeIndex.Entry] = []
                entries.reserveCapacity(tables[entityIndex].count)
                for row in tables[entityIndex].liveRows {
                    if case .attribute(let value) = row.values[propertyIndex] {
                        entries.append(AttributeIndex.Entry(value: value, key: row.key))
                    }
                }
                var fresh = AttributeIndex(propertyIndex: propertyIndex)
                fresh.rebuild(removing: [], inserting: entries)
                indexes[entityIndex][position] = fresh
            }
        }
    }

    /// Applies a changeset read from the log.
    mutating func replay(
        _ changeset: Changeset, blobHandles handles: [UInt64], model: ObjectModel, insertDefaults: [[PropertyValue]]
    ) throws(EventGraphError) {
        // Both IDs come from the log: compare without adding (the last one may be the largest ID).
        guard
            lastTransactionID == 0
                || (changeset.transactionID > lastTransactionID && changeset.transactionID - lastTransactionID == 1)
        else {
            throw EventGraphError(
                .log,
                "transaction \(changeset.transactionID) follows transaction \(lastTransactionID); IDs must be contiguous"
            )
        }
        let staged = try stage(changeset, model: model, insertDefaults: insertDefaults)
        install(staged, model: model)
        for (index, handle) in handles.enumerated() {
            blobHandles[BlobKey(transactionID: changeset.transactionID, index: UInt32(index))] = handle
        }
        lastTransactionID = changeset.transactionID
        lastCommitTimeMicroseconds = changeset.commitTimeMicroseconds
        nextKey = max(nextKey, changeset.nextKey)
    }
}

/// The index entries one commit removes and inserts, collected so each index applies them as one batch.
private struct IndexChanges {
    /// Per entity, per index: removals and insertions.
    private var changes: [[(removals: [AttributeIndex.Entry], insertions: [AttributeIndex.Entry])]]
    private var isEmpty = true

    init(_ indexes: [[AttributeIndex]]) {
        changes = indexes.map { Array(repeating: ([], []), count: $0.count) }
    }

    mutating func record(entityIndex: Int, key: UInt64, old: Row?, new: Row?, indexes: [[AttributeIndex]]) {
        let entityIndexes = indexes[entityIndex]
        guard !entityIndexes.isEmpty else { return }
        for (position, index) in entityIndexes.enumerated() {
            let property = index.propertyIndex
            let oldValue = old.flatMap { row -> AttributeValue? in
                if case .attribute(let value) = row.values[property] { value } else { nil }
            }
            let newValue = new.flatMap { row -> AttributeValue? in
                if case .attribute(let value) = row.values[property] { value } else { nil }
            }
            if oldValue == newValue { continue }
            isEmpty = false
            if let oldValue { changes[entityIndex][position].removals.append(.init(value: oldValue, key: key)) }
            if let newValue { changes[entityIndex][position].insertions.append(.init(value: newValue, key: key)) }
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
