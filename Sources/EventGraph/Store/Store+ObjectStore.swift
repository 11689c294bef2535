import Foundation
import LogFormat

/// A store is the object store beneath a root context: one store, at index 0 of its own table.
///
/// Each requirement maps onto the store's own read and commit API, so that the state beneath (its rows, indexes
/// and log) can change without the contexts above it noticing.
extension Store: ObjectStore {
    /// The index of a store in its own table, as in its log: 0 is the store that holds the payload
    /// (``ObjectReference/storeIndex``).
    static let ownStoreIndex: UInt32 = 0

    var storeUUIDs: [UUID] { [storeUUID] }

    func storeIndex(of storeUUID: UUID) -> UInt32? {
        storeUUID == self.storeUUID ? Self.ownStoreIndex : nil
    }

    func row(of identity: ObjectIdentity, entityIndex: Int) -> Row? {
        requireOwn(identity.storeIndex)
        return row(entityIndex: entityIndex, key: identity.key)
    }

    func row(of identity: ObjectIdentity, in entityIndices: [Int]) -> Row? {
        requireOwn(identity.storeIndex)
        return row(forKey: identity.key, in: entityIndices)
    }

    func committedRow(of identity: ObjectIdentity, entityIndex: Int) -> CommittedRow? {
        requireOwn(identity.storeIndex)
        return committedRow(entityIndex: entityIndex, key: identity.key)
    }

    func committedRow(of identity: ObjectIdentity, in entityIndices: [Int]) -> CommittedRow? {
        requireOwn(identity.storeIndex)
        return committedRow(forKey: identity.key, in: entityIndices)
    }

    func lookUpCommittedRow(of identity: ObjectIdentity, entityIndex: Int) throws(EventGraphError) -> CommittedRow? {
        requireOwn(identity.storeIndex)
        return try lookUpCommittedRow(entityIndex: entityIndex, key: identity.key)
    }

    func committedRow(
        of identity: ObjectIdentity, entityIndex: Int, cache: inout EntityVersionCache,
        prefetchingProperty property: Int
    ) -> CommittedRow? {
        requireOwn(identity.storeIndex)
        return committedRow(entityIndex: entityIndex, key: identity.key, cache: &cache, prefetchingProperty: property)
    }

    func prefetchCommittedRow(
        of identity: ObjectIdentity, entityIndex: Int, cache: inout EntityVersionCache,
        prefetchingProperty property: Int
    ) {
        guard identity.storeIndex == Self.ownStoreIndex else { return }
        refresh(&cache, entityIndex: entityIndex)
        cache.version.prefetchSlot(forKey: identity.key)
        // The slot where the object likely is starts loading too, without waiting for the directory to say so: its
        // version, value count and `property`'s entries then arrive with the directory's place and the registry's.
        if let slot = cache.predictedSlot(forKey: identity.key) {
            cache.version.prefetchResidentSlot(slot, property: property)
        }
    }

    func lookUpCommittedRow(of identity: ObjectIdentity, in entityIndices: [Int]) throws(EventGraphError)
        -> CommittedRow?
    {
        requireOwn(identity.storeIndex)
        return try lookUpCommittedRow(forKey: identity.key, in: entityIndices)
    }

    func rows(of entityIndex: Int) -> [StoreRows] {
        entityVersions(of: [entityIndex]).map { StoreRows(storeIndex: Self.ownStoreIndex, version: $0) }
    }

    func indexedRows(
        entityIndex: Int, ranges: [(propertyIndex: Int, range: IndexRange)], including extra: [ObjectIdentity]
    ) throws(EventGraphError) -> [StoreRows]? {
        for identity in extra { requireOwn(identity.storeIndex) }
        guard
            let (version, slots) = try indexedSlots(
                entityIndex: entityIndex, ranges: ranges, extraKeys: extra.map(\.key))
        else { return nil }
        return [StoreRows(storeIndex: Self.ownStoreIndex, version: version, slots: slots)]
    }

    func filteredRows(entityIndex: Int, filter: ResolvedFilter, including extra: [ObjectIdentity])
        throws(EventGraphError) -> [StoreRows]
    {
        for identity in extra { requireOwn(identity.storeIndex) }
        let (version, slots) = try filteredSlots(entityIndex: entityIndex, filter: filter, extraKeys: extra.map(\.key))
        return [StoreRows(storeIndex: Self.ownStoreIndex, version: version, slots: slots)]
    }

    func identity(holding tuple: UniqueKey) throws(EventGraphError) -> ObjectIdentity? {
        try holder(of: tuple).map { ObjectIdentity(storeIndex: Self.ownStoreIndex, key: $0) }
    }

    func readBlob(_ reference: BlobReference, inStore storeIndex: UInt32) throws(EventGraphError) -> [UInt8]? {
        requireOwn(storeIndex)
        return try readBlob(reference)
    }

    func reserveIdentity(for entity: EntityDescription) -> ObjectIdentity {
        ObjectIdentity(storeIndex: Self.ownStoreIndex, key: reserveKey())
    }

    /// ``lookUpCommittedRow(entityIndex:key:)`` with the index of the chunk that holds the object and the number of
    /// stores the store's table held at that version (itself and its foreign stores), for a coordinator that
    /// renumbers the chunk's references once per chunk version (``RenumberedChunks``).
    ///
    /// - Throws: the error of a checkpoint chunk that may hold the object and cannot be loaded.
    func committedRowAndChunk(entityIndex: Int, key: UInt64) throws(EventGraphError)
        -> (row: CommittedRow, chunkIndex: Int, tableCount: Int)?
    {
        // As in `committedRow(entityIndex:key:)`: the slot under the lock when its chunk is in memory, else the
        // version is taken and a chunk on disk read after the lock.
        let (lookup, chunkIndex, tableCount) = state.withLock { state in
            let (lookup, chunkIndex) = state.tables[entityIndex].committedRowAndChunk(inMemoryForKey: key)
            return (lookup, chunkIndex, state.foreignStores.count + 1)
        }
        switch lookup {
        case .found(let row): return (row, chunkIndex, tableCount)
        case .absent: return nil
        case .mayBeOnDisk:
            let (version, tableCount) = state.withLock { state in
                (state.version(ofEntity: entityIndex), state.foreignStores.count + 1)
            }
            return try version.committedRowAndChunk(forKey: key).map { ($0.row, $0.chunkIndex, tableCount) }
        }
    }

    /// An object's slot when its chunk is in memory, reading the chunk's columns as `view` gives them (a
    /// coordinator's, with their references renumbered), found and made under the store's lock in one go: `view`
    /// gets the chunk's index, the store's table of foreign stores as of the chunk and the chunk's columns, and runs
    /// under the lock, so it must take no lock of a store. ``EntityColumns/InMemoryLookup/mayBeOnDisk`` sends the
    /// caller to ``committedRowAndChunk(entityIndex:key:)``.
    @inline(__always)
    func committedRow(
        inMemoryForKey key: UInt64, entityIndex: Int,
        viewingColumns view: (_ chunkIndex: Int, _ foreignStores: [LogUUID], _ columns: [Column]) -> [Column]
    ) -> EntityColumns.InMemoryLookup {
        state.withLock { state in
            state.tables[entityIndex].committedRow(inMemoryForKey: key) { chunkIndex, columns in
                view(chunkIndex, state.foreignStores, columns)
            }
        }
    }

    private func requireOwn(_ storeIndex: UInt32) {
        precondition(storeIndex == Self.ownStoreIndex, "store \(storeUUID) has no store \(storeIndex) beneath it")
    }
}
