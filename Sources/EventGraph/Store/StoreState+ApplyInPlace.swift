import LogFormat

extension StoreState {
    /// Applies a replayed changeset's operations to the columns in place, in order: an update writes the columns it
    /// changes, a relate edits its list where it is, an insert writes its values without a ``Row``; the indexes
    /// then take each touched object's old and new values of the properties they read, in first-touch order, as
    /// ``install(_:model:)`` does. The result is the state staging and installing the changeset builds.
    ///
    /// Returns `false`, having changed nothing, for a changeset in which an object is deleted and touched by another
    /// operation (or by two of different entities): staging collapses those (an insert then a delete leaves no
    /// slot behind, a delete then an update is refused as such), which in-place application would not.
    mutating func applyInPlace(
        _ changeset: ReplayChangeset, model: ObjectModel, insertDefaults: [[PropertyValue]], policy: ReplayPolicy,
        anomalies: inout [String]
    ) throws(EventGraphError) -> Bool {
        let operations = changeset.operations
        // Per touched object of this store: its entity, whether an operation deletes it, whether one was applied,
        // and its place in `order` — in a table found by key without `Hasher` (the dictionaries and the set this
        // took before ran it several times per operation).
        var touched = ProbingTable<TouchedObject>()
        touched.reserveCapacity(operations.count)
        var order: [UInt64] = []
        // The objects an operation was applied to (not refused), in the order of the first one: staging's order.
        var appliedOrder: [UInt64] = []
        // Whether a touched entity has indexes to update (set below): otherwise — always for a tool's state, which
        // keeps none — the two notes below are not taken (two lookups and updates of `touched` per operation).
        var updatesIndexes = true
        func didApply(_ key: UInt64) {
            guard updatesIndexes, var entry = touched[key], !entry.isApplied else { return }
            entry.isApplied = true
            touched.update(entry)
            appliedOrder.append(key)
        }
        // Notes that an operation may change a value the indexes read of `key` (before or after `didApply`).
        func changesIndexed(_ key: UInt64) {
            guard updatesIndexes, var entry = touched[key], !entry.changesIndexedValues else { return }
            entry.changesIndexedValues = true
            touched.update(entry)
        }
        // Counted only for a transaction large enough to grow the tables once (below).
        let countsInserts = operations.count > 64
        var insertCounts = countsInserts ? Array(repeating: 0, count: tables.count) : []
        for operation in operations {
            let reference = operation.object
            let entityIndex = Int(reference.entityIndex)
            // Operations on other stores' objects or unknown entities are refused below, as staging refuses them.
            guard reference.storeIndex == 0, entityIndex < tables.count else { continue }
            var isDelete = false
            switch operation.kind {
            case .delete: isDelete = true
            case .insert: if countsInserts { insertCounts[entityIndex] += 1 }
            case .update, .relate: break
            }
            if let seen = touched[reference.key] {
                if seen.isDeleted || isDelete || seen.entityIndex != entityIndex { return false }
            } else {
                touched.update(
                    TouchedObject(key: reference.key, entityIndex: entityIndex, isDeleted: isDelete, place: order.count)
                )
                order.append(reference.key)
            }
        }
        if countsInserts {
            // Grow every table and the uniqueness index once, not by doubling along the way.
            for (entityIndex, count) in insertCounts.enumerated() where count > 0 {
                reserveCapacity(ofEntity: entityIndex, adding: count)
            }
            if keepsUniqueEntries(model: model) {
                uniqueIndex.reserveCapacity(uniqueIndex.count + order.count)
            }
        }
        // The old values the indexes read, taken before anything changes (only for entities that have indexes; a
        // state without indexes needs none of any entity: see `oldValuesNeeded`).
        var neededProperties: [[Int]?] = Array(repeating: isIndexed ? nil : [], count: tables.count)
        // By place in `order`.
        var oldRows: [Row?] = []
        if isIndexed {
            for key in order {
                let entityIndex = touched[key]!.entityIndex
                if neededProperties[entityIndex] == nil {
                    neededProperties[entityIndex] = oldValuesNeeded(ofEntity: entityIndex, model: model)
                }
                let needed = neededProperties[entityIndex]!
                if !needed.isEmpty, let old = tables[entityIndex].row(forKey: key, decoding: needed) {
                    if oldRows.isEmpty { oldRows = Array(repeating: nil, count: order.count) }
                    oldRows[touched[key]!.place] = old
                }
            }
        }
        // Every touched entity has its entry now; the indexes read the entities whose entry is not empty.
        updatesIndexes = neededProperties.contains { $0.map { !$0.isEmpty } ?? false }

        let version = changeset.transactionID
        let check = OperationCheck(version: version, model: model, entityCount: tables.count, policy: policy)
        // For an insert's properties, the number of the insert that last set each (the others take their default).
        var setBy: [Int] = []
        var insertNumber = 0
        // Per entity, its insert defaults prepared for the columns once per transaction (no ``PropertyValue`` per
        // default of every insert).
        var preparedDefaults: [[PreparedColumnValue]?] = []
        for operation in operations {
            let reference = operation.object
            switch operation.kind {
            case .insert:
                guard let entityIndex = try check.ownEntity(of: reference, "inserts", &anomalies) else { continue }
                // One lookup: the key's slot is kept for the put (nothing changes the table in between).
                let existing = tables[entityIndex].slot(forKey: reference.key)
                if existing != nil {
                    // Tolerated, the insert replaces the object: the log's latest word on it.
                    try check.reject("inserts \(check.name(reference)), which exists", &anomalies)
                }
                // The values are read by index, not through a slice of `changeset.values` (whose copy and
                // destruction went through the slice's metadata, with a retain and a release, for every insert).
                let valueRange = operation.values
                let defaultCount = insertDefaults[entityIndex].count
                for index in valueRange where changeset.values[index].propertyIndex >= defaultCount {
                    try check.rejectMissingProperty(changeset.values[index].propertyIndex, of: reference, &anomalies)
                }
                if let existing {
                    // A replacement (rare) is put as a whole row, as staging builds it.
                    var row = insertDefaults[entityIndex]
                    for index in valueRange where changeset.values[index].propertyIndex < row.count {
                        let value = changeset.values[index]
                        row[Int(value.propertyIndex)] = changeset.materialized(value)
                    }
                    put(entityIndex: entityIndex, key: reference.key, version: version, values: row, slot: existing)
                } else {
                    // The values are written from the payload's bytes into the new slot; the properties the insert
                    // leaves out take the recorded defaults.
                    insertNumber += 1
                    if setBy.count < defaultCount { setBy = Array(repeating: 0, count: defaultCount) }
                    if preparedDefaults.isEmpty { preparedDefaults = Array(repeating: nil, count: tables.count) }
                    if preparedDefaults[entityIndex] == nil {
                        preparedDefaults[entityIndex] = insertDefaults[entityIndex].map(PreparedColumnValue.init)
                    }
                    let prepared = preparedDefaults[entityIndex]!
                    let number = insertNumber
                    append(
                        entityIndex: entityIndex, key: reference.key, version: version, valueCount: defaultCount
                    ) {
                        chunk, position in
                        for index in valueRange where changeset.values[index].propertyIndex < defaultCount {
                            let value = changeset.values[index]
                            chunk.updateColumn(property: Int(value.propertyIndex), at: position) {
                                changeset.write(value, into: &$0, at: position)
                            }
                            setBy[Int(value.propertyIndex)] = number
                        }
                        chunk.setDefaults(prepared, at: position, except: setBy, number: number)
                    }
                }
                changesIndexed(reference.key)
                didApply(reference.key)
            case .update:
                guard let entityIndex = try check.ownEntity(of: reference, "updates", &anomalies) else { continue }
                let found: Void? = try modify(entityIndex: entityIndex, key: reference.key) {
                    (chunk, position) throws(EventGraphError) in
                    chunk.setVersion(version, at: position)
                    let count = chunk.valueCount(at: position)
                    for index in operation.values {
                        let value = changeset.values[index]
                        guard value.propertyIndex < count else {
                            try check.rejectMissingProperty(value.propertyIndex, of: reference, &anomalies)
                            continue
                        }
                        chunk.updateColumn(property: Int(value.propertyIndex), at: position) {
                            changeset.write(value, into: &$0, at: position)
                        }
                    }
                }
                guard found != nil else {
                    try check.reject("updates \(check.name(reference)), which does not exist", &anomalies)
                    continue
                }
                if let needed = neededProperties[entityIndex], !needed.isEmpty,
                    operation.values.contains(where: { needed.contains(Int(changeset.values[$0].propertyIndex)) })
                {
                    changesIndexed(reference.key)
                }
                didApply(reference.key)
            case .relate:
                let propertyIndex = operation.propertyIndex
                let (added, removed) = changeset.relates[operation.values.lowerBound]
                guard let entityIndex = try check.ownEntity(of: reference, "relates", &anomalies) else { continue }
                let found = try modify(entityIndex: entityIndex, key: reference.key) {
                    (chunk, position) throws(EventGraphError) in
                    guard chunk.holdsMany(property: Int(propertyIndex), at: position) else {
                        try check.reject(
                            "relates \(check.name(reference)) through property #\(propertyIndex), which is not "
                                + "to-many", &anomalies)
                        return false
                    }
                    chunk.setVersion(version, at: position)
                    chunk.editMany(property: Int(propertyIndex), at: position) { targets, keyBound in
                        Self.relate(&targets, added: added, removed: removed, keyBound: keyBound)
                    }
                    return true
                }
                guard let found else {
                    try check.reject("relates \(check.name(reference)), which does not exist", &anomalies)
                    continue
                }
                if found {
                    if let needed = neededProperties[entityIndex], needed.contains(Int(propertyIndex)) {
                        changesIndexed(reference.key)
                    }
                    didApply(reference.key)
                }
            case .delete:
                guard let entityIndex = try check.ownEntity(of: reference, "deletes", &anomalies) else { continue }
                guard tables[entityIndex].slot(forKey: reference.key) != nil else {
                    try check.reject("deletes \(check.name(reference)), which does not exist", &anomalies)
                    continue
                }
                removeRow(entityIndex: entityIndex, key: reference.key)
                changesIndexed(reference.key)
                didApply(reference.key)
            }
        }

        var indexChanges = IndexChanges(indexes)
        var deferred: IndexChanges?
        for key in appliedOrder {
            let entry = touched[key]!
            let entityIndex = entry.entityIndex
            let needed = neededProperties[entityIndex]!
            guard !needed.isEmpty else { continue }
            let oldRow = oldRows.isEmpty ? nil : oldRows[entry.place]
            // An object whose indexed values no operation wrote keeps them: its old row serves as the new one (not
            // decoded again; the indexes see the same row on both sides and change nothing).
            let newRow =
                if !entry.changesIndexedValues, let oldRow { oldRow } else {
                    tables[entityIndex].row(forKey: key, decoding: needed)
                }
            updateIndexes(
                entityIndex: entityIndex, key: key, old: oldRow, new: newRow, model: model, changes: &indexChanges,
                deferred: &deferred)
        }
        indexChanges.apply(to: &indexes)
        if let deferred, deferred.hasChanges { deferredIndexChanges.append(deferred) }
        return true
    }
}

/// What the in-place applier notes of each object a transaction touches (see `applyInPlace`).
struct TouchedObject: ProbingTableEntry {
    var key: UInt64
    /// The object's entity; -1 for an empty place of the table.
    var entityIndex: Int
    /// Whether an operation of the transaction deletes it.
    var isDeleted: Bool
    /// Whether an operation on it was applied (not refused).
    var isApplied = false
    /// Whether an applied operation may have changed a value the indexes read (an insert, a delete, or a write of
    /// such a property); when not, its new values for the indexes are its old ones.
    var changesIndexedValues = false
    /// Its place in the order of first touch.
    var place: Int

    static var empty: TouchedObject { TouchedObject(key: 0, entityIndex: -1, isDeleted: false, place: 0) }

    var isEmpty: Bool { entityIndex < 0 }

    /// A transaction's inserts have sequential keys: 16 of them share a hash and take neighbouring places (as in
    /// ``KeyDirectory``), so the applier's several lookups of each walk the table in order instead of missing the
    /// cache once per object (h74's profile: 40 % of the applier's own samples were the loads of these lookups).
    static var groupsSequentialKeys: Bool { true }

    @inline(__always)
    static func placeInGroup(_ key: UInt64) -> Int { Int(truncatingIfNeeded: key & 15) }

    @inline(__always)
    static func hash(_ key: UInt64) -> UInt64 { (key >> 4) &* 0x9E37_79B9_7F4A_7C15 }
}
