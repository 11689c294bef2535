import LogFormat

// Foreign-store localization, in one place: every payload (changeset, checkpoint chunk) numbers the stores its
// references point into by its own table; the state keeps one table for all of them, and these functions
// re-express a payload's references in it before anything else reads them.
extension StoreState {
    /// The changeset with every reference re-expressed in the state's foreign-store table (unchanged, and not
    /// copied, when it names no other store).
    mutating func localize(_ changeset: Changeset) -> Changeset {
        guard !changeset.foreignStores.isEmpty else { return changeset }
        let map = storeIndexMap(changeset.foreignStores)
        var localized = changeset
        localized.foreignStores = []
        localized.operations = changeset.operations.map { operation in
            switch operation {
            case .insert(let object, let changes):
                .insert(Self.localize(object, map), changes.map { Self.localize($0, map) })
            case .update(let object, let changes):
                .update(Self.localize(object, map), changes.map { Self.localize($0, map) })
            case .relate(let object, let property, let added, let removed):
                .relate(
                    Self.localize(object, map), propertyIndex: property,
                    added: added.map { Self.localize($0, map) }, removed: removed.map { Self.localize($0, map) })
            case .delete(let object):
                .delete(Self.localize(object, map))
            }
        }
        return localized
    }

    /// ``localize(_:)-(Changeset)`` of a changeset decoded for replay.
    mutating func localize(_ changeset: ReplayChangeset) -> ReplayChangeset {
        guard !changeset.header.foreignStores.isEmpty else { return changeset }
        var localized = changeset
        localized.localize(storeIndexMap(changeset.header.foreignStores))
        return localized
    }

    /// The records of a checkpoint chunk with every reference re-expressed in the state's foreign-store table.
    mutating func localizedRecords(of chunk: CheckpointChunk) -> [ObjectRecord] {
        guard !chunk.foreignStores.isEmpty else { return chunk.records }
        let map = storeIndexMap(chunk.foreignStores)
        return chunk.records.map { record in
            ObjectRecord(
                object: Self.localize(record.object, map), properties: record.properties.map { Self.localize($0, map) })
        }
    }

    /// For each of a payload's foreign stores (store index `k` at position `k - 1`), the state's store index.
    private mutating func storeIndexMap(_ stores: [LogUUID]) -> [UInt32] {
        stores.map { storeIndex(of: $0) }
    }

    static func localize(_ reference: ObjectReference, _ map: [UInt32]) -> ObjectReference {
        // Decoding checked every index against the payload's table; a payload built in memory with a bad index is
        // left as it is rather than trapping.
        guard reference.storeIndex > 0, Int(reference.storeIndex) <= map.count else { return reference }
        var local = reference
        local.storeIndex = map[Int(reference.storeIndex) - 1]
        return local
    }

    static func localize(_ change: PropertyChange, _ map: [UInt32]) -> PropertyChange {
        switch change.value {
        case .attribute:
            change
        case .toOne(let target):
            PropertyChange(propertyIndex: change.propertyIndex, value: .toOne(target.map { localize($0, map) }))
        case .toMany(let targets):
            PropertyChange(propertyIndex: change.propertyIndex, value: .toMany(targets.map { localize($0, map) }))
        }
    }
}
