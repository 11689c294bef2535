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
        isIdentity = coordinatorIndices.enumerated().allSatisfy { UInt32($0.offset) == $0.element }
    }

    /// Whether every index keeps its number (the first store of a coordinator, until its table and the
    /// coordinator's diverge): rows then pass through untouched.
    let isIdentity: Bool

    /// How many stores the store's table held when this numbering was made (itself and its foreign stores). A
    /// store's table only grows and never renumbers, so a numbering covers every row and chunk version the store
    /// held when its table was no longer than this.
    var tableCount: Int { coordinatorIndices.count }

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
