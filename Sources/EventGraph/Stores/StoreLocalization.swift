import LogFormat

/// The reverse of ``StoreNumbering``: a request's references, numbered by a coordinator, in one store's numbering.
struct StoreLocalization {
    /// The store's index in the coordinator.
    let ownIndex: UInt32
    /// The coordinator's table.
    let storeUUIDs: [LogUUID]
    /// The store's foreign stores: its state's table, then the stores this request adds (``foreignStores``).
    private(set) var foreignStores: [LogUUID]
    private var localIndexByCoordinatorIndex: [UInt32: UInt32] = [:]
    /// Whether a reference named another store: only then does the changeset carry the table of foreign stores, so
    /// a save that stays in one store writes what it writes today.
    private(set) var namesOtherStores = false

    init(ownIndex: UInt32, storeUUIDs: [LogUUID], knownForeignStores: [LogUUID]) {
        self.ownIndex = ownIndex
        self.storeUUIDs = storeUUIDs
        self.foreignStores = knownForeignStores
    }

    /// The reference in the store's numbering; a store it does not name yet joins its foreign stores.
    mutating func toLocal(_ reference: ObjectReference) -> ObjectReference {
        var local = reference
        local.storeIndex = localIndex(of: reference.storeIndex)
        return local
    }

    private mutating func localIndex(of coordinatorIndex: UInt32) -> UInt32 {
        if coordinatorIndex == ownIndex { return 0 }
        namesOtherStores = true
        if let known = localIndexByCoordinatorIndex[coordinatorIndex] { return known }
        let uuid = storeUUIDs[Int(coordinatorIndex)]
        if foreignStores.firstIndex(of: uuid) == nil { foreignStores.append(uuid) }
        let local = UInt32(foreignStores.firstIndex(of: uuid)! + 1)
        localIndexByCoordinatorIndex[coordinatorIndex] = local
        return local
    }

    mutating func toLocal(_ change: PropertyChange) -> PropertyChange {
        switch change.value {
        case .attribute: change
        case .toOne(let target):
            PropertyChange(propertyIndex: change.propertyIndex, value: .toOne(target.map { toLocal($0) }))
        case .toMany(let targets):
            PropertyChange(propertyIndex: change.propertyIndex, value: .toMany(targets.map { toLocal($0) }))
        }
    }

    mutating func toLocal(_ operation: ChangeOperation) -> ChangeOperation {
        switch operation {
        case .insert(let object, let changes):
            .insert(toLocal(object), changes.map { toLocal($0) })
        case .update(let object, let changes):
            .update(toLocal(object), changes.map { toLocal($0) })
        case .relate(let object, let property, let added, let removed):
            .relate(
                toLocal(object), propertyIndex: property, added: added.map { toLocal($0) },
                removed: removed.map { toLocal($0) })
        case .delete(let object):
            .delete(toLocal(object))
        }
    }

    /// A row read through the coordinator, back in the store's numbering (for conflict detection).
    mutating func toLocal(_ row: Row) -> Row {
        let values = row.values.map { value -> PropertyValue in
            switch value {
            case .attribute: value
            case .toOne(let target): .toOne(target.map { toLocal($0) })
            case .toMany(let targets): .toMany(targets.map { toLocal($0) })
            }
        }
        return Row(entityIndex: row.entityIndex, key: row.key, version: row.version, values: values)
    }
}
