import Foundation
import LogFormat

// Unmounted stores, as the coordinator sees them: indices of its table past the mounted stores. Nothing resolves
// there (rows are `nil`), and a save that would change an object there is refused before any store is touched.
extension StoreCoordinator {
    /// The placement of an entity whose configuration's store is not mounted: inserting one is a programmer error.
    static let unmountedPlacement = UInt32.max

    /// The unmounted stores: each store of the table past the mounted ones, described by the store given for it
    /// when there is one, then the stores given whose UUIDs are unknown (a missing file).
    ///
    /// A missing file's UUID is unknown, but the mounted logs name it: when one store of the table and one store
    /// given are left unmatched, they are the same store.
    static func describeUnmounted(_ tableUUIDs: [UUID], _ given: [UnmountedStore]) -> [UnmountedStore] {
        let unmatched = tableUUIDs.filter { uuid in !given.contains { $0.storeUUID == uuid } }
        let unknown = given.filter { $0.storeUUID == nil }
        if unmatched.count == 1, unknown.count == 1 {
            let paired = UnmountedStore(
                storeUUID: unmatched[0], configuration: unknown[0].configuration, path: unknown[0].path)
            return describeUnmounted(tableUUIDs, given.filter { $0.storeUUID != nil } + [paired])
        }
        let referred = tableUUIDs.map { uuid in
            given.first { $0.storeUUID == uuid } ?? UnmountedStore(storeUUID: uuid, configuration: nil, path: nil)
        }
        return referred + unknown
    }

    var hasUnmountedStores: Bool { storeUUIDs.count > stores.count }

    func unmountedStore(at storeIndex: UInt32) -> UnmountedStore? {
        guard Int(storeIndex) >= stores.count, Int(storeIndex) < storeUUIDs.count else { return nil }
        let uuid = storeUUIDs[Int(storeIndex)]
        return unmountedStores.first { $0.storeUUID == uuid }
    }

    /// Refuses a request that inserts, changes or deletes an object of an unmounted store (an inverse, a cascade or
    /// an object read through a stale reference): its log cannot record it, and leaving it out would break the
    /// graph silently.
    func requireMounted(_ request: CommitRequest) throws(EventGraphError) {
        for operation in request.operations {
            let object = operation.object
            guard let store = unmountedStore(at: object.storeIndex) ?? unknownStore(at: object.storeIndex) else {
                continue
            }
            let entity = model.entities[Int(object.entityIndex)].name
            let id = objectID(of: object.identity, entityName: entity)
            let verb =
                switch operation {
                case .insert: "inserts"
                case .delete: "deletes (a cascade?)"
                case .update, .relate: "changes (the inverse of a relationship?)"
                }
            throw EventGraphError(
                .storeNotMounted,
                "the save \(verb) \(entity) \(id.uriString) in \(store), whose log cannot record it until the store "
                    + "is mounted; nothing was saved")
        }
    }

    /// A store index past the table's mounted stores that the table has no description for.
    private func unknownStore(at storeIndex: UInt32) -> UnmountedStore? {
        guard Int(storeIndex) >= stores.count else { return nil }
        let uuid = Int(storeIndex) < storeUUIDs.count ? storeUUIDs[Int(storeIndex)] : nil
        return UnmountedStore(storeUUID: uuid, configuration: nil, path: nil)
    }
}
