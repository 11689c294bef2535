import LogFormat

/// How one store's references translate into a coordinator's table of stores and back.
///
/// A store numbers the stores its references point into by its own table: 0 is itself, `k` is the `k`-th of its
/// foreign stores (``StoreState``'s table, which only grows). A coordinator numbers them by its table
/// (``ObjectStore/storeUUIDs``). Rows and references cross between the two through this map only.
struct StoreNumbering: Sendable {
    /// For each of the store's indices, the coordinator's index.
    let coordinatorIndices: [UInt32]

    /// The numbering of the store at `ownIndex` in the coordinator, whose foreign stores are `foreignStores`.
    ///
    /// - Parameter coordinatorIndex: the coordinator's index of a store UUID; every store a store's log names is
    ///   in the coordinator's table (mounted or not), which it builds from the logs when it opens.
    init(ownIndex: UInt32, foreignStores: [LogUUID], coordinatorIndex: (LogUUID) -> UInt32) {
        coordinatorIndices = [ownIndex] + foreignStores.map(coordinatorIndex)
    }

    /// Whether every index keeps its number (the first store of a coordinator, until its table and the
    /// coordinator's diverge): rows then pass through untouched.
    var isIdentity: Bool {
        coordinatorIndices.enumerated().allSatisfy { UInt32($0.offset) == $0.element }
    }

    /// A store's reference in the coordinator's numbering.
    func toCoordinator(_ reference: ObjectReference) -> ObjectReference {
        var mapped = reference
        precondition(
            Int(reference.storeIndex) < coordinatorIndices.count,
            "a row names store \(reference.storeIndex) its table lacks")
        mapped.storeIndex = coordinatorIndices[Int(reference.storeIndex)]
        return mapped
    }

    /// A store's row in the coordinator's numbering: the same row when none of its references changes number.
    func toCoordinator(_ row: Row, hasRelationships: Bool) -> Row {
        guard hasRelationships, !isIdentity else { return row }
        var changed = false
        let values = row.values.map { value -> PropertyValue in
            switch value {
            case .attribute:
                return value
            case .toOne(let target):
                guard let target else { return value }
                changed = true
                return .toOne(toCoordinator(target))
            case .toMany(let targets):
                guard !targets.isEmpty else { return value }
                changed = true
                return .toMany(targets.map(toCoordinator))
            }
        }
        guard changed else { return row }
        return Row(entityIndex: row.entityIndex, key: row.key, version: row.version, values: values)
    }
}

/// The reverse direction: a request's references, numbered by a coordinator, in one store's numbering.
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
