import Foundation
import LogFormat

/// The object store beneath the contexts of a container with several stores: one ``Store`` per configuration of
/// the model, each with its own log.
///
/// Each call goes to the store an identity names (``ObjectIdentity/storeIndex``, the index in ``storeUUIDs``);
/// scans and counts span every store; a new object's identity comes from the store of its entity's configuration;
/// a commit is split into one changeset per store. Stores number the stores their references point into by their
/// own tables, the coordinator by ``storeUUIDs``: ``StoreNumbering`` translates references on the way up (a chunk
/// version's relationship columns once, in ``RenumberedChunks``, so that objects read through the coordinator hold
/// chunk slots as objects of one store do) and ``StoreLocalization`` requests on the way down.
final class StoreCoordinator: ObjectStore {
    let model: ObjectModel
    /// The mounted stores, by index (the first entries of ``storeUUIDs``).
    let stores: [Store]
    /// The mounted stores, then every other store their logs refer to (unmounted: nothing resolves there).
    let storeUUIDs: [UUID]
    private let logUUIDs: [LogUUID]
    private let indexByLogUUID: [LogUUID: UInt32]
    /// For each entity, the index of the store that holds its new objects.
    let placement: [UInt32]
    /// For each entity, whether its rows can hold references (rows of others are never translated).
    private let relationshipFlags: [Bool]
    /// For each mounted store, its chunk versions with their references in this coordinator's numbering.
    let renumberedChunks: [RenumberedChunks]
    /// ``stores``, unretained, for lookups that borrow a store (``stores`` keeps each alive as long as the coordinator).
    private let storeReferences: [Unmanaged<Store>]
    /// Told each step of a save across stores (tests that kill the process there).
    let crossStoreStepObserver: (@Sendable (CrossStoreCommitStep) -> Void)?

    /// The stores the container was given but did not mount, and every other store the mounted logs refer to.
    let unmountedStores: [UnmountedStore]
    /// The references that opening cleaned up (see ``ReferenceCleanupReport``).
    let referenceCleanup: ReferenceCleanupReport

    /// A coordinator over stores opened with `model`; `placement` gives, per entity, the index of its store, or
    /// ``unmountedPlacement`` for an entity whose configuration's store is not mounted.
    init(
        model: ObjectModel, stores: [Store], placement: [UInt32], unmounted: [UnmountedStore] = [],
        referenceCleanup: ReferenceCleanupReport = ReferenceCleanupReport(cleanedReferences: []),
        crossStoreStepObserver: (@Sendable (CrossStoreCommitStep) -> Void)? = nil
    ) {
        self.crossStoreStepObserver = crossStoreStepObserver
        precondition(placement.count == model.entities.count, "a placement names one store per entity")
        precondition(
            placement.allSatisfy { Int($0) < stores.count || $0 == Self.unmountedPlacement },
            "a placement names a mounted store")
        self.model = model
        self.stores = stores
        self.placement = placement
        self.referenceCleanup = referenceCleanup
        var uuids = stores.map { $0.storeUUID.logUUID }
        for store in stores {
            for foreign in store.state.withLock({ $0.foreignStores }) where !uuids.contains(foreign) {
                uuids.append(foreign)
            }
        }
        for case let uuid? in unmounted.map(\.storeUUID) where !uuids.contains(uuid.logUUID) {
            uuids.append(uuid.logUUID)
        }
        unmountedStores = Self.describeUnmounted(uuids.dropFirst(stores.count).map { UUID(logUUID: $0) }, unmounted)
        logUUIDs = uuids
        storeUUIDs = uuids.map { UUID(logUUID: $0) }
        indexByLogUUID = Dictionary(uniqueKeysWithValues: uuids.enumerated().map { ($1, UInt32($0)) })
        relationshipFlags = model.entities.map { entity in entity.properties.contains { $0.relationship != nil } }
        let relationshipProperties = model.entities.map { entity in
            entity.properties.indices.filter { entity.properties[$0].relationship != nil }
        }
        renumberedChunks = stores.map { _ in RenumberedChunks(relationshipProperties: relationshipProperties) }
        storeReferences = stores.map { Unmanaged.passUnretained($0) }
    }

    /// Whether rows of an entity can hold references (rows of other entities are never translated).
    func hasRelationships(ofEntity entityIndex: Int) -> Bool { relationshipFlags[entityIndex] }

    var isReadOnly: Bool { stores.contains { $0.isReadOnly } }
    var lastTransactionID: UInt64 { stores.map(\.lastTransactionID).max() ?? 0 }

    /// The mounted store at a coordinator index; `nil` for a store that is only referred to.
    private func store(at storeIndex: UInt32) -> Store? {
        Int(storeIndex) < stores.count ? stores[Int(storeIndex)] : nil
    }

    /// How the store at `storeIndex` numbers stores, as of now (its table grows when a commit names a new store).
    func numbering(ofStoreAt storeIndex: UInt32) -> StoreNumbering {
        numbering(ofStoreAt: storeIndex, foreignStores: stores[Int(storeIndex)].state.withLock { $0.foreignStores })
    }

    private func numbering(ofStoreAt storeIndex: UInt32, foreignStores: [LogUUID]) -> StoreNumbering {
        StoreNumbering(ownIndex: storeIndex, foreignStores: foreignStores) { uuid in
            guard let index = indexByLogUUID[uuid] else {
                // Only a commit through this coordinator adds to a store's table, and only stores of its table.
                preconditionFailure("store \(uuid) is not in the table of the coordinator")
            }
            return index
        }
    }

    // MARK: Reading

    /// The numbering of the mounted store at `storeIndex`, covering a table of at least `tableCount` stores (as read
    /// under the store's lock with the rows it numbers): kept per store, remade only when the store's table grew.
    func numbering(ofStoreAt storeIndex: UInt32, covering tableCount: Int) -> StoreNumbering {
        renumberedChunks[Int(storeIndex)].numbering(covering: tableCount) { numbering(ofStoreAt: storeIndex) }
    }

    /// The committed row of an object of a known entity, its chunk read from disk if need be.
    ///
    /// - Throws: the error of a checkpoint chunk that may hold the object and cannot be loaded.
    func lookUpCommittedRow(of identity: ObjectIdentity, entityIndex: Int) throws(EventGraphError) -> CommittedRow? {
        let position = Int(identity.storeIndex)
        guard position < stores.count else { return nil }
        // The store is borrowed, not retained: `stores` holds every store for the coordinator's lifetime. A retain
        // of a store takes the runtime's slow path (a store has a side table of weak references): a profile of the
        // cross-store fetch put 11 % of this lookup's samples there.
        return try storeReferences[position]._withUnsafeGuaranteedRef { store in
            Result { () throws(EventGraphError) -> CommittedRow? in
                // Rows of an entity without relationships hold no reference: the store's slot as it is.
                guard hasRelationships(ofEntity: entityIndex) else {
                    return try store.lookUpCommittedRow(entityIndex: entityIndex, key: identity.key)
                }
                // A chunk in memory: the slot is made on the renumbered columns under the store's lock, in one go
                // (a slot on the store's columns, then replaced, cost a copy and a release of the row per fault).
                let chunks = renumberedChunks[position]
                let lookup = store.committedRow(inMemoryForKey: identity.key, entityIndex: entityIndex) {
                    chunkIndex, foreignStores, columns in
                    chunks.columns(
                        columns, entityIndex: entityIndex, chunkIndex: chunkIndex,
                        tableCount: foreignStores.count + 1
                    ) { numbering(ofStoreAt: identity.storeIndex, foreignStores: foreignStores) }
                }
                switch lookup {
                case .found(let row): return row
                case .absent: return nil
                case .mayBeOnDisk: break
                }
                guard
                    let (row, chunkIndex, tableCount) = try store.committedRowAndChunk(
                        entityIndex: entityIndex, key: identity.key)
                else { return nil }
                return renumberedChunks[position].committedRow(row, chunkIndex: chunkIndex, tableCount: tableCount) {
                    numbering(ofStoreAt: identity.storeIndex)
                }
            }
        }.get()
    }

    func lookUpCommittedRow(of identity: ObjectIdentity, in entityIndices: [Int]) throws(EventGraphError)
        -> CommittedRow?
    {
        // A key is unique in its store across entities: at most one of them holds it.
        for entityIndex in entityIndices {
            if let row = try lookUpCommittedRow(of: identity, entityIndex: entityIndex) { return row }
        }
        return nil
    }

    func committedRow(of identity: ObjectIdentity, entityIndex: Int) -> CommittedRow? {
        do {
            return try lookUpCommittedRow(of: identity, entityIndex: entityIndex)
        } catch {
            Store.failLookUp(key: identity.key, error)
        }
    }

    func committedRow(of identity: ObjectIdentity, in entityIndices: [Int]) -> CommittedRow? {
        do {
            return try lookUpCommittedRow(of: identity, in: entityIndices)
        } catch {
            Store.failLookUp(key: identity.key, error)
        }
    }

    func row(of identity: ObjectIdentity, entityIndex: Int) -> Row? {
        committedRow(of: identity, entityIndex: entityIndex)?.row
    }

    func row(of identity: ObjectIdentity, in entityIndices: [Int]) -> Row? {
        committedRow(of: identity, in: entityIndices)?.row
    }

    /// A batch of slots of the store at `storeIndex`: renumbered chunk by chunk when the entity has relationships
    /// and the store's numbering is not the coordinator's.
    private func batch(
        storeIndex: UInt32, version: EntityColumns, slots: [Int]? = nil, tableCount: Int, keepingChunks: Bool = true
    ) -> StoreRows {
        let numbering = numbering(ofStoreAt: storeIndex, covering: tableCount)
        guard hasRelationships(ofEntity: version.entityIndex), !numbering.isIdentity else {
            return StoreRows(storeIndex: storeIndex, version: version, slots: slots)
        }
        return StoreRows(
            storeIndex: storeIndex, version: version, slots: slots,
            renumbering: ChunkRenumbering(
                chunks: renumberedChunks[Int(storeIndex)], numbering: numbering, keepsChunks: keepingChunks))
    }

    func rows(of entityIndex: Int) throws(EventGraphError) -> [StoreRows] {
        rows(of: entityIndex, keepingChunks: true)
    }

    /// ``rows(of:)``; with `keepingChunks` false, the chunks renumbered for it are not kept for later readers (a
    /// scan of every object once, which must not pin every chunk, see ``RenumberedChunks``).
    func rows(of entityIndex: Int, keepingChunks: Bool) -> [StoreRows] {
        // Every store is asked, not only the one of the entity's configuration: a store keeps the objects it was
        // given under an earlier placement.
        stores.indices.compactMap { position in
            // The version is taken under the lock; its slots are read after the lock is let go.
            let (version, tableCount) = stores[position].state.withLock { state in
                (state.version(ofEntity: entityIndex), state.foreignStores.count + 1)
            }
            guard version.count > 0 else { return nil }
            return batch(
                storeIndex: UInt32(position), version: version, tableCount: tableCount, keepingChunks: keepingChunks)
        }
    }

    func filteredRows(entityIndex: Int, filter: ResolvedFilter, including extra: [ObjectIdentity])
        throws(EventGraphError) -> [StoreRows]
    {
        // Each store filters its own columns, as a store of one does (a filter reads attributes, never references).
        var batches: [StoreRows] = []
        for position in stores.indices {
            let storeIndex = UInt32(position)
            let (version, slots) = try stores[position].filteredSlots(
                entityIndex: entityIndex, filter: filter,
                extraKeys: extra.lazy.filter { $0.storeIndex == storeIndex }.map(\.key))
            guard !slots.isEmpty else { continue }
            // The table is read after the version: it covers every reference the version holds.
            let tableCount = stores[position].state.withLock { $0.foreignStores.count + 1 }
            batches.append(batch(storeIndex: storeIndex, version: version, slots: slots, tableCount: tableCount))
        }
        return batches
    }

    func rowCount(of entityIndices: [Int]) -> Int {
        stores.reduce(0) { $0 + $1.rowCount(of: entityIndices) }
    }

    func indexedRows(
        entityIndex: Int, ranges: [(propertyIndex: Int, range: IndexRange)], including extra: [ObjectIdentity]
    ) throws(EventGraphError) -> [StoreRows]? {
        var batches: [StoreRows] = []
        for (position, store) in stores.enumerated() {
            let storeIndex = UInt32(position)
            let extraKeys = extra.lazy.filter { $0.storeIndex == storeIndex }.map(\.key)
            guard
                let (version, slots) = try store.indexedSlots(
                    entityIndex: entityIndex, ranges: ranges, extraKeys: Array(extraKeys))
            else { return nil }
            guard !slots.isEmpty else { continue }
            // The table is read after the version: it covers every reference the version holds.
            let tableCount = store.state.withLock { $0.foreignStores.count + 1 }
            batches.append(batch(storeIndex: storeIndex, version: version, slots: slots, tableCount: tableCount))
        }
        return batches
    }

    func identity(holding tuple: UniqueKey) throws(EventGraphError) -> ObjectIdentity? {
        for (position, store) in stores.enumerated() {
            if let key = try store.holder(of: tuple) { return ObjectIdentity(storeIndex: UInt32(position), key: key) }
        }
        return nil
    }

    func readBlob(_ reference: BlobReference, inStore storeIndex: UInt32) throws(EventGraphError) -> [UInt8]? {
        guard let store = store(at: storeIndex) else { return nil }
        return try store.readBlob(reference)
    }

    // MARK: Writing

    func reserveIdentity(for entity: EntityDescription) -> ObjectIdentity {
        let storeIndex = placement[entity.index]
        precondition(
            storeIndex != Self.unmountedPlacement,
            "\(entity.name) objects go to the store of the configuration '\(model.configurationName(of: entity))', "
                + "which is not mounted (see ModelContainer.unmountedStores)")
        return ObjectIdentity(storeIndex: storeIndex, key: stores[Int(storeIndex)].reserveKey())
    }

    /// The coordinator's table of stores as the logs name them.
    var storeLogUUIDs: [LogUUID] { logUUIDs }
}

extension StoreCoordinator {
    /// The mounted store that holds a configuration's new objects.
    func store(ofConfiguration name: String) -> Store? {
        guard let entity = model.entities.first(where: { model.configurationName(of: $0) == name }) else {
            return nil
        }
        let storeIndex = placement[entity.index]
        return storeIndex == Self.unmountedPlacement ? nil : stores[Int(storeIndex)]
    }
}
