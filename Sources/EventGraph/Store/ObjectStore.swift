import Foundation
import LogFormat

/// What a context reads from and saves into: the committed objects beneath it.
///
/// Contexts and their objects reach the data beneath them only through this protocol, so that what is beneath can
/// change without them changing:
/// - ``Store`` serves one store: its snapshot, its log and its key counter. Its table of stores holds itself alone,
///   at index 0, the index a log gives the store that holds a payload (``ObjectReference/storeIndex``).
/// - ``ParentContextStore`` serves a child context (nested contexts): it reads through to its parent's object store
///   and overlays the parent's unsaved changes; its ``commit(_:)`` moves a child's changes into the parent without
///   reaching a log, and it passes the table of stores beneath it through unchanged.
/// - A coordinator of several stores is to route each call to the store an identity names
///   (``ObjectIdentity/storeIndex``), span every store in scans, choose the store of a new object by its entity's
///   configuration, and split a commit into one changeset per store.
///
/// Every identity and reference a conformer takes or hands out, including those inside rows, numbers stores by the
/// conformer's table, ``storeUUIDs``. Conformers are `Sendable`: a context calls them from its own isolation domain,
/// and several contexts share one.
protocol ObjectStore: AnyObject, Sendable {
    /// The model of every store beneath.
    var model: ObjectModel { get }
    /// The stores beneath, by the index that identities and references use.
    var storeUUIDs: [UUID] { get }
    /// Whether ``commit(_:)`` is refused (an *as of* view).
    var isReadOnly: Bool { get }
    /// The last transaction committed beneath (the largest of any store's, for several).
    var lastTransactionID: UInt64 { get }
    /// Whether an object exists beneath only as an unsaved insert (a parent context's), so that its ID is still
    /// temporary; a store holds committed objects only.
    func isUncommitted(_ identity: ObjectIdentity) -> Bool
    /// The last transaction of each store beneath, in a fixed order: a commit in any of them changes it, so a
    /// fetched property's cached result made under another stamp may be stale. Defaults to ``lastTransactionID``.
    var transactionStamp: [UInt64] { get }
    /// Whether the store that holds a configuration's objects is beneath and mounted (true by default: a store of
    /// one holds every configuration's objects).
    func isMounted(configuration name: String) -> Bool
    /// The store at `storeIndex` when the table names it but it is not mounted (nothing resolves there, nothing
    /// can be saved there); `nil` for a mounted store.
    func unmountedStore(at storeIndex: UInt32) -> UnmountedStore?
    /// Whether any store of the table is unmounted: when not, references need no check on the way up.
    var hasUnmountedStores: Bool { get }
    /// The index of a store in ``storeUUIDs``, if it is beneath (a lookup by ID asks for every object, so a store
    /// of one answers without building its table).
    func storeIndex(of storeUUID: UUID) -> UInt32?

    // MARK: Reading

    /// The committed row of an object of a known entity; `nil` when there is none.
    func row(of identity: ObjectIdentity, entityIndex: Int) -> Row?
    /// The committed row of an object of one of some entities (an ``ObjectID`` may name a super-entity).
    func row(of identity: ObjectIdentity, in entityIndices: [Int]) -> Row?
    /// ``row(of:entityIndex:)`` as a reader holds it: a store hands out a chunk slot, without a ``Row``.
    func committedRow(of identity: ObjectIdentity, entityIndex: Int) -> CommittedRow?
    /// ``committedRow(of:entityIndex:)`` for a throwing operation (a fetch, a count, a child's save): throws the error
    /// of a checkpoint chunk that may hold the object and cannot be loaded, never answers `nil` for it.
    func lookUpCommittedRow(of identity: ObjectIdentity, entityIndex: Int) throws(EventGraphError) -> CommittedRow?
    /// ``row(of:in:)`` as a reader holds it: a store hands out a chunk slot, without a ``Row``. For callers that
    /// cannot throw (a fault, a lookup by ID): a checkpoint chunk that may hold the object and cannot be loaded ends
    /// the process, as a property getter does.
    func committedRow(of identity: ObjectIdentity, in entityIndices: [Int]) -> CommittedRow?
    /// ``committedRow(of:entityIndex:)`` for a lookup by ID, through a context's `cache` of the entity's version (a
    /// store reads it without its lock while nothing changed; others ignore the cache). A store starts loading the
    /// slot's value of `property` (-1 for none), which the caller expects to be read next, with the slot's version.
    func committedRow(
        of identity: ObjectIdentity, entityIndex: Int, cache: inout EntityVersionCache,
        prefetchingProperty property: Int
    ) -> CommittedRow?
    /// Starts loading where ``committedRow(of:entityIndex:cache:prefetchingProperty:)`` will look `identity` up,
    /// without waiting (a store issues its key directory's place, and the slot the object is likely at with its value
    /// of `property`, -1 for none; others do nothing): the caller probes its registry meanwhile.
    func prefetchCommittedRow(
        of identity: ObjectIdentity, entityIndex: Int, cache: inout EntityVersionCache,
        prefetchingProperty property: Int)
    /// ``committedRow(of:in:)`` for a throwing operation (a fetch, a find-or-create): throws the error of a
    /// checkpoint chunk that may hold the object and cannot be loaded, never answers `nil` for it.
    func lookUpCommittedRow(of identity: ObjectIdentity, in entityIndices: [Int]) throws(EventGraphError)
        -> CommittedRow?
    /// Every committed row of one entity (sub-entities not included), per store, for scanning without a lock.
    /// Throws the error of a checkpoint chunk that cannot be loaded when the rows are read now (a child context's
    /// overlay reads them; a store hands out its slots, read when the batch is, see ``StoreRows``).
    func rows(of entityIndex: Int) throws(EventGraphError) -> [StoreRows]
    /// How many committed objects some entities have in all. Throws the error of a checkpoint chunk that cannot be
    /// loaded and that the count depends on (a child context's count of the objects its parent deleted).
    func rowCount(of entityIndices: [Int]) throws(EventGraphError) -> Int
    /// The rows of one entity that an attribute index finds for some value ranges, plus the rows of `extra`, per
    /// store, each store's in commit order; `nil` when no index serves the ranges or they are not selective (a
    /// scan is then as cheap). Throws the error of a checkpoint chunk that cannot be loaded and that the index's
    /// answer depends on (see `Store.indexedSlots`).
    func indexedRows(
        entityIndex: Int, ranges: [(propertyIndex: Int, range: IndexRange)], including extra: [ObjectIdentity]
    ) throws(EventGraphError) -> [StoreRows]?
    /// The committed rows of one entity whose values pass `filter`, plus the rows of `extra`, per store, each
    /// store's in commit order: a scan that a store can run on its columns instead of on rows. Throws the error of a
    /// checkpoint chunk that cannot be loaded (its objects would otherwise silently not match).
    func filteredRows(entityIndex: Int, filter: ResolvedFilter, including extra: [ObjectIdentity])
        throws(EventGraphError) -> [StoreRows]
    /// The committed object that holds a unique value tuple. Throws the error of a checkpoint chunk that cannot be
    /// loaded and that the answer depends on (see `Store.holder(of:)`).
    func identity(holding tuple: UniqueKey) throws(EventGraphError) -> ObjectIdentity?
    /// An externally stored value of an object in the store at `storeIndex`; `nil` when that store's log no longer
    /// holds it (a compaction dropped it: the reader holds an older row of the object).
    func readBlob(_ reference: BlobReference, inStore storeIndex: UInt32) throws(EventGraphError) -> [UInt8]?

    // MARK: Writing

    /// A new identity for an object of `entity`, never handed out before (also when the object is never saved).
    func reserveIdentity(for entity: EntityDescription) -> ObjectIdentity
    /// Commits a context's changes, all or nothing; the result names the transaction and the committed rows.
    func commit(_ request: CommitRequest) throws(EventGraphError) -> CommitResult
}

/// The committed rows of one entity in one store, as a scan sees them.
///
/// A store hands out the slots of an entity version (``Content/slots(_:_:)``): a fetch reads them as
/// ``CommittedRow``s, and the objects it makes hold the slots, so no ``Row`` is allocated per object; a coordinator
/// of several stores hands out slots of chunks with their references renumbered (``renumbering``). Code that
/// rewrites a batch (a child context's overlay, the reference cleanup) reads ``rows()``, which makes handle rows of
/// the slots, and sets them (``replaceRows(with:)``). Reading a batch of slots throws the error of a checkpoint chunk
/// that cannot be loaded: a scan never reads such a chunk as holding no object.
struct StoreRows: Sendable {
    /// What a batch holds.
    enum Content: Sendable {
        /// Rows (`nil` for a deleted object's hole).
        case rows([Row?])
        /// Live slots of one entity version in commit order: every live slot (`nil`), or those listed, in
        /// ascending order, each once.
        case slots(EntityColumns, [Int]?)
    }

    /// The store's index in the object store's table (``ObjectStore/storeUUIDs``).
    var storeIndex: UInt32
    var content: Content
    /// For slots of a store read through a coordinator whose numbering differs from the store's: each chunk's
    /// references renumbered once (see ``RenumberedChunks``), so that the slots read the coordinator's numbering.
    private(set) var renumbering: ChunkRenumbering?

    init(storeIndex: UInt32, rows: [Row?]) {
        self.storeIndex = storeIndex
        content = .rows(rows)
    }

    /// A batch of the live slots of an entity version: all of them (`slots == nil`), or those listed (in any order;
    /// each is taken once, in commit order); `renumbering` puts a store's references in a coordinator's numbering.
    init(storeIndex: UInt32, version: EntityColumns, slots: [Int]? = nil, renumbering: ChunkRenumbering? = nil) {
        self.storeIndex = storeIndex
        self.renumbering = renumbering
        guard var slots else {
            content = .slots(version, nil)
            return
        }
        slots.sort()
        var previous = -1
        slots.removeAll { slot in
            defer { previous = slot }
            return slot == previous
        }
        content = .slots(version, slots)
    }

    /// The rows of the batch; a batch of slots makes a handle row for each (an allocation per object).
    ///
    /// - Throws: the error of a checkpoint chunk that cannot be loaded.
    func rows() throws(EventGraphError) -> [Row?] {
        switch content {
        case .rows(let rows): return rows
        case .slots(let version, let slots):
            var rows: [Row?] = []
            rows.reserveCapacity(slots?.count ?? version.count)
            try forEachCommittedRow { (row: CommittedRow) -> Bool in
                rows.append(row.row)
                return true
            }
            return rows
        }
    }

    /// Makes the batch hold `rows`.
    mutating func replaceRows(with rows: [Row?]) {
        content = .rows(rows)
        renumbering = nil
    }

    /// An upper bound of the number of rows (holes included).
    var count: Int {
        switch content {
        case .rows(let rows): rows.count
        case .slots(let version, let slots): slots?.count ?? version.count
        }
    }

    /// Calls `body` with each committed row in commit order until it returns false; a batch of slots makes no
    /// ``Row``.
    ///
    /// - Throws: what `body` throws, or the error of a checkpoint chunk that cannot be loaded.
    @inline(__always)
    func forEachCommittedRow(_ body: (CommittedRow) throws(EventGraphError) -> Bool) throws(EventGraphError) {
        switch content {
        case .rows(let rows):
            for case let row? in rows { guard try body(CommittedRow(row)) else { return } }
        case .slots(let version, let slots):
            guard let renumbering else { return try version.forEachCommittedRow(atSlots: slots, body) }
            try version.forEachCommittedRow(
                atSlots: slots,
                chunkView: { chunkIndex, chunk in
                    renumbering.chunk(chunk, entityIndex: version.entityIndex, chunkIndex: chunkIndex)
                }, body)
        }
    }
}

extension ObjectStore {
    func isUncommitted(_ identity: ObjectIdentity) -> Bool { false }
    func unmountedStore(at storeIndex: UInt32) -> UnmountedStore? { nil }
    var hasUnmountedStores: Bool { false }

    func committedRow(of identity: ObjectIdentity, entityIndex: Int) -> CommittedRow? {
        row(of: identity, entityIndex: entityIndex).map(CommittedRow.init)
    }

    func committedRow(of identity: ObjectIdentity, in entityIndices: [Int]) -> CommittedRow? {
        row(of: identity, in: entityIndices).map(CommittedRow.init)
    }

    func committedRow(
        of identity: ObjectIdentity, entityIndex: Int, cache: inout EntityVersionCache,
        prefetchingProperty property: Int
    ) -> CommittedRow? {
        let row = committedRow(of: identity, entityIndex: entityIndex)
        if let columns = row?.values.heldColumns { columns.prefetchValue(at: property) }
        return row
    }

    func prefetchCommittedRow(
        of identity: ObjectIdentity, entityIndex: Int, cache: inout EntityVersionCache,
        prefetchingProperty property: Int
    ) {}

    /// The rows ``rows(of:)`` returns that pass `filter` on their committed values or are in `extra`.
    func filteredRows(entityIndex: Int, filter: ResolvedFilter, including extra: [ObjectIdentity])
        throws(EventGraphError) -> [StoreRows]
    {
        let extra = Set(extra)
        var filtered: [StoreRows] = []
        for batch in try rows(of: entityIndex) {
            var kept = batch
            kept.replaceRows(
                with: try batch.rows().filter { row in
                    guard let row else { return false }
                    return extra.contains(row.identity(inStore: batch.storeIndex))
                        || filter.matches { index in
                            if case .attribute(let value) = row.values[index] { return value }
                            return .null
                        }
                })
            filtered.append(kept)
        }
        return filtered
    }

    /// The index of a store in the table, if it is beneath.
    func storeIndex(of storeUUID: UUID) -> UInt32? {
        storeUUIDs.firstIndex(of: storeUUID).map { UInt32($0) }
    }

    /// The permanent or temporary ID of an object.
    func objectID(of identity: ObjectIdentity, entityName: String, isTemporary: Bool = false) -> ObjectID {
        ObjectID(
            storeUUID: storeUUIDs[Int(identity.storeIndex)], entityName: entityName, key: identity.key,
            isTemporary: isTemporary)
    }
}
