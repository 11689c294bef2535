import LogFormat

/// The committed state of a store, as the log replays to it: every live row, the counters, the foreign-store table
/// and the indexes.
///
/// It is the one state type of the engine: the library's store holds one (and installs its commits into it), and
/// the tools build one from the log alone (``Replayer``, ``LogGraph``). Readers go through its methods — rows by
/// entity and key, rows in commit order, index ranges, unique holders — never through the storage behind them, so
/// that the storage (rows today, columnar chunks later) can change without touching contexts or fetches.
struct StoreState: Sendable {
    /// The objects of each entity, by column (see ``EntityColumns``); read through the methods below. Every change
    /// advances ``tablesGeneration`` (one place for every writer: the methods below, the only ones that can change it).
    private(set) var tables: [EntityColumns] {
        didSet { tablesGeneration?.advance() }
    }
    /// Counts the changes to ``tables`` for readers that keep an entity's version without the lock (a store's, see
    /// ``EntityVersionCache``); `nil` for a tool's state, which no such reader reads.
    var tablesGeneration: TablesGeneration?
    var lastTransactionID: UInt64 = 0
    var lastCommitTimeMicroseconds: Int64 = 0
    /// The next key the store will allocate (persisted in every changeset and checkpoint).
    var nextKey: UInt64 = 1
    /// The last value of each named counter (see `Stores/Store+SequenceGenerator.swift`).
    var sequences: [String: UInt64] = [:]
    /// Where each externally stored value is, by its logical reference: only the values the live state references
    /// after a compaction (which drops the others from the log), plus those of later saves.
    var blobHandles: [BlobKey: UInt64] = [:]
    /// The log generation (see ``LogBackend``) the handles belong to.
    var blobGeneration: UInt64 = 0
    /// The stores that references with a store index above 0 point into: index `k` is `foreignStores[k - 1]`.
    /// Every payload carries its own table; ``localize(_:)-(Changeset)`` re-expresses its references in this one,
    /// which only grows, so an index once handed out keeps its meaning.
    private(set) var foreignStores: [LogUUID] = []
    /// Whether the uniqueness index and the attribute indexes are kept: a store's state needs them for commits
    /// and fetches; a tool's replay does not, and skips their cost.
    let isIndexed: Bool
    /// For each uniqueness constraint, the holder of each value tuple (empty unless ``isIndexed``).
    var uniqueIndex: [UniqueKey: UInt64] = [:]
    /// For each entity, a sorted index of each indexed attribute over the entity's own rows (none unless
    /// ``isIndexed``).
    var indexes: [[AttributeIndex]]
    /// The entities whose chunks came from a checkpoint unloaded and whose uniqueness entries are not in
    /// ``uniqueIndex`` yet: they are added on first need (``buildPendingUniqueEntries(_:model:)``); until then
    /// commits leave those entities' entries out.
    var pendingUniqueEntities: Set<Int> = []
    /// The entities whose chunks came from a checkpoint unloaded and whose attribute indexes are not built yet:
    /// built on first need (``buildPendingAttributeIndexes(_:)``); until then commits leave them out and
    /// ``attributeIndexLookup(ofEntity:)`` declines (a scan answers).
    var pendingAttributeIndexEntities: Set<Int> = []
    /// The uniqueness entries a checkpoint stored (format 1.4) for entities whose chunks came unloaded: such an
    /// entity is not pending; ``holder(of:)`` finds a tuple in ``uniqueIndex`` (the changes since the checkpoint)
    /// and then here, checking the found object's current values.
    var storedUniqueIndexes: [CheckpointIndex] = []
    /// The attribute indexes a checkpoint stored (format 1.4), by entity, for pending entities: built from these
    /// (no entity chunk read, no sort) plus ``deferredIndexChanges`` on first need.
    var storedAttributeIndexes: [Int: [CheckpointIndex]] = [:]
    /// Where the checkpoint this state was read from stored each entity's indexes: kept (they hold no entries) for
    /// as long as the state reads that checkpoint's chunks, so that a compaction copies the indexes of an entity
    /// that has not changed since (``builtCheckpointIndexes(model:entities:copyingStored:)``).
    var storedIndexFrames: [Int: [StoredIndexFrames]] = [:]
    /// The attribute index changes of the commits since the checkpoint to entities whose indexes are pending and
    /// stored, in commit order (each in the shape of ``indexes``).
    var deferredIndexChanges: [IndexChanges] = []

    init(model: ObjectModel, isIndexed: Bool = true) {
        self.isIndexed = isIndexed
        tables = model.entities.indices.map(EntityColumns.init(entityIndex:))
        indexes = model.entities.map { entity in
            isIndexed ? entity.indexedPropertyIndices.map(AttributeIndex.init(propertyIndex:)) : []
        }
    }

    // MARK: - Reading

    /// The committed row of an object.
    func row(entityIndex: Int, key: UInt64) -> Row? {
        tables[entityIndex].row(forKey: key)
    }

    /// The number of live objects of one entity (not its sub-entities).
    func objectCount(ofEntity entityIndex: Int) -> Int { tables[entityIndex].count }

    /// The number of live objects.
    var objectCount: Int { tables.reduce(0) { $0 + $1.count } }

    /// The current version of one entity's objects: a value that later commits do not change, to be read after
    /// the store's lock is let go.
    func version(ofEntity entityIndex: Int) -> EntityColumns { tables[entityIndex] }

    /// Calls `body` with every live row of one entity, in commit order (each row is built from the columns).
    func forEachRow(ofEntity entityIndex: Int, _ body: (Row) throws -> Void) rethrows {
        let table = tables[entityIndex]
        try table.forEachLiveSlot { chunk, position, _ in try body(chunk.row(at: position, entityIndex: entityIndex)) }
    }

    /// The holder of a unique value tuple: the changes since the checkpoint first, then the checkpoint's stored
    /// entries (format 1.4), each checked against its object's current values.
    ///
    /// - Throws: the error of a checkpoint chunk (of the stored index, or of the object an entry names) that cannot
    ///   be loaded: the holder may be in it.
    func holder(of tuple: UniqueKey) throws(EventGraphError) -> UInt64? {
        if let key = uniqueIndex[tuple] { return key }
        guard !storedUniqueIndexes.isEmpty else { return nil }
        return try storedHolder(of: tuple)
    }

    /// The UUID of the store a reference points into; `nil` for this store, and for an index the table lacks.
    func storeUUID(of reference: ObjectReference) -> LogUUID? {
        let index = Int(reference.storeIndex)
        guard index > 0, index <= foreignStores.count else { return nil }
        return foreignStores[index - 1]
    }

    // MARK: - Writing rows (the applier and checkpoint loading)

    /// Replaces every entity's version with `transform`'s (a copy of the state for one pass, see
    /// ``pinningCheckpointChunks()``).
    mutating func replaceTables(
        _ transform: (EntityColumns) throws(EventGraphError) -> EntityColumns
    ) throws(EventGraphError) {
        for index in tables.indices { tables[index] = try transform(tables[index]) }
    }

    /// Inserts or replaces a row.
    mutating func put(_ row: Row) { tables[row.entityIndex].put(row) }

    /// Appends new objects of one entity, whose keys no live object has, running `alongside` with each batch (see
    /// ``EntityColumns/appendInserted(_:alongside:)``).
    mutating func appendInserted(
        _ rows: UnsafeBufferPointer<InsertedRow>, entityIndex: Int, alongside: InsertedRowsTask? = nil
    ) {
        tables[entityIndex].appendInserted(rows, alongside: alongside)
    }

    /// Removes the row of `key` from one entity.
    mutating func removeRow(entityIndex: Int, key: UInt64) { tables[entityIndex].remove(key: key) }

    /// Inserts or replaces an object's values, without a ``Row`` (a replayed insert); `slot` is
    /// ``EntityColumns/slot(forKey:)``'s answer for the key, looked up since the table last changed.
    mutating func put(entityIndex: Int, key: UInt64, version: UInt64, values: [PropertyValue], slot: Int?) {
        tables[entityIndex].put(key: key, version: version, values: values, slot: slot)
    }

    /// Adds an object whose key no live object has, its values written by `write` into its new slot (a replayed
    /// insert; see ``EntityColumns/append(key:version:valueCount:_:)``).
    mutating func append(
        entityIndex: Int, key: UInt64, version: UInt64, valueCount: Int,
        _ write: (inout ColumnChunk, _ position: Int) -> Void
    ) {
        tables[entityIndex].append(key: key, version: version, valueCount: valueCount, write)
    }

    /// Changes a live object in its chunk (see ``EntityColumns/modify(key:_:)``); `nil` when it does not exist.
    mutating func modify<R>(
        entityIndex: Int, key: UInt64, _ body: (inout ColumnChunk, _ position: Int) throws(EventGraphError) -> R
    ) throws(EventGraphError) -> R? {
        try tables[entityIndex].modify(key: key, body)
    }

    /// Takes a checkpoint's chunks of one entity (format 1.3) as chunks that stay on disk until touched; the
    /// entity's indexes are built on first need.
    ///
    /// - Parameter storedIndexes: the indexes the checkpoint stored for the entity (format 1.4): used when they
    ///   cover every uniqueness constraint (then no uniqueness entry is pending) or every attribute index (then
    ///   the attribute indexes are built from them rather than from the chunks).
    mutating func adoptUnloadedChunks(
        _ chunks: [LazyColumnChunk], entityIndex: Int, storedIndexes: [CheckpointIndex] = [], model: ObjectModel
    ) {
        tables[entityIndex].adoptUnloadedChunks(chunks)
        guard isIndexed else { return }
        let frames = storedIndexes.compactMap(\.frames)
        if !frames.isEmpty { storedIndexFrames[entityIndex] = frames }
        let constraints = model.entities[entityIndex].uniqueConstraints
        let uniques = constraints.compactMap { constraint in
            storedIndexes.first { $0.constraint == constraint }.map { index in
                var index = index
                index.entityChunks = chunks
                return index
            }
        }
        if uniques.count == constraints.count {
            storedUniqueIndexes += uniques
        } else {
            pendingUniqueEntities.insert(entityIndex)
        }
        let attributes = indexes[entityIndex].compactMap { index in
            storedIndexes.first { $0.kind == .attribute && $0.propertyIndex == index.propertyIndex }
        }
        if !indexes[entityIndex].isEmpty && attributes.count == indexes[entityIndex].count {
            storedAttributeIndexes[entityIndex] = attributes
        }
        pendingAttributeIndexEntities.insert(entityIndex)
    }

    /// Makes every checkpoint chunk of every entity resident (``EntityColumns/makeCheckpointChunksResident()``).
    ///
    /// - Throws: the error of the first damaged chunk; the entities before it are resident then.
    mutating func makeCheckpointChunksResident() throws(EventGraphError) {
        for index in tables.indices { try tables[index].makeCheckpointChunksResident() }
    }

    /// Makes room for `count` more rows of one entity.
    mutating func reserveCapacity(ofEntity entityIndex: Int, adding count: Int) {
        tables[entityIndex].reserveCapacity(adding: count)
    }

    /// Interns a store UUID in the foreign-store table; returns its store index (1-based).
    mutating func storeIndex(of uuid: LogUUID) -> UInt32 {
        if let existing = foreignStores.firstIndex(of: uuid) { return UInt32(existing + 1) }
        foreignStores.append(uuid)
        return UInt32(foreignStores.count)
    }
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

    /// The tuple of a constraint whose values `value` reads by property index; `nil` when one is null (nulls are
    /// never equal, as in SQL). Builds no array for a one-attribute constraint.
    @inline(__always)
    init?(_ constraint: UniqueConstraint, value: (_ propertyIndex: Int) -> AttributeValue) {
        let indices = constraint.propertyIndices
        let first = value(indices[0])
        guard first != .null else { return nil }
        var rest: [AttributeValue] = []
        if indices.count > 1 {
            rest.reserveCapacity(indices.count - 1)
            for index in indices.dropFirst() {
                let next = value(index)
                guard next != .null else { return nil }
                rest.append(next)
            }
        }
        self.entityIndex = constraint.entityIndex
        self.ordinal = constraint.ordinal
        self.first = first
        self.rest = rest
    }

    /// The tuple of a row for a constraint; `nil` when a value is null (nulls are never equal, as in SQL).
    init?<Values: RandomAccessCollection<PropertyValue>>(_ constraint: UniqueConstraint, values rowValues: Values)
    where Values.Index == Int {
        // A value that is not an attribute's (a damaged row) makes no tuple, as a null does.
        self.init(constraint) { index in
            guard case .attribute(let value) = rowValues[index] else { return .null }
            return value
        }
    }
}
