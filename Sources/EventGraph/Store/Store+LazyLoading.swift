import LogFormat

/// The store's side of lazily loaded checkpoints (format 1.3): the chunks a commit changes are loaded, and their
/// damage reported, before anything is staged; the indexes of entities whose chunks came unloaded are built the
/// first time a lookup or a uniqueness check needs them.
extension Store {
    /// Adds the pending uniqueness entries that lookups of tuples of `entities`' constraints need (see
    /// ``StoreState/pendingUniqueEntities``).
    ///
    /// - Throws: the error of a chunk of theirs that cannot be loaded (nothing is built then).
    func buildPendingUniqueEntries(for entities: some Sequence<Int>) throws(EventGraphError) {
        try buildPending { state in
            state.pendingUniqueEntities(for: entities, model: model)
        } build: { state, needed in
            state.buildPendingUniqueEntries(needed, model: model)
        }
    }

    /// Builds the attribute indexes of one entity if they are pending (see
    /// ``StoreState/pendingAttributeIndexEntities``).
    ///
    /// - Throws: the error of a chunk of the entity that cannot be loaded when the indexes are built from its
    ///   chunks (nothing is built then).
    func buildPendingAttributeIndexes(ofEntity entityIndex: Int) throws(EventGraphError) {
        try buildPending(usingStoredIndexes: true) { state in
            state.pendingAttributeIndexEntities.contains(entityIndex) ? [entityIndex] : []
        } build: { state, needed in
            state.buildPendingAttributeIndexes(needed)
        }
    }

    /// Loads what building the indexes of the entities `select` names reads, outside the state's lock (each chunk's
    /// box has its own), then runs `build` on them under it: the checkpoint's stored index chunks when
    /// `usingStoredIndexes` and the entities have them (format 1.4), else the entities' chunks, pinned until the
    /// build is done (the budget of decoded chunks cannot make it read one again under the lock).
    ///
    /// - Throws: the error of an entity chunk that cannot be loaded: built without it, an index would lack its
    ///   objects (a lookup through it would find nothing, a uniqueness check would let a duplicate in). Nothing is
    ///   built then, and the entities stay pending.
    private func buildPending(
        usingStoredIndexes: Bool = false, _ select: (StoreState) -> [Int], build: (inout StoreState, [Int]) -> Void
    ) throws(EventGraphError) {
        let (needed, snapshot) = state.withLock { state in (select(state), state) }
        guard !needed.isEmpty else { return }
        var pins: [LazyColumnChunk] = []
        if !usingStoredIndexes || !snapshot.preloadStoredAttributeIndexes(of: needed) {
            do {
                for entityIndex in needed { try snapshot.version(ofEntity: entityIndex).loadAll(pinning: &pins) }
            } catch {
                for box in pins { box.unpin() }
                throw error
            }
        }
        let held = ChunkPins(pins)
        state.withLock { build(&$0, needed) }
        withExtendedLifetime(held) {}
    }

    /// Loads the chunks a commit's operations touch and builds the uniqueness indexes it checks. The chunks stay
    /// pinned while the result is held: the commit keeps it until it is installed.
    ///
    /// - Throws: ``EventGraphError/Code/log`` naming the file, the entity, the chunk and its byte offset when one
    ///   of those chunks is damaged.
    func prepareState(for operations: [ChangeOperation]) throws(EventGraphError) -> ChunkPins? {
        let snapshot = state.withLock { $0 }
        guard snapshot.hasUnloadedChunks || !snapshot.pendingUniqueEntities.isEmpty else { return nil }
        let pins = try snapshot.loadChunks(touchedBy: operations)
        let entities = Set(operations.lazy.map { Int($0.object.entityIndex) }).filter { $0 < model.entities.count }
        try buildPendingUniqueEntries(for: entities)
        return pins
    }
}

extension StoreState {
    /// Whether any entity still has chunks on disk.
    var hasUnloadedChunks: Bool { tables.contains(where: \.hasUnloadedChunks) }

    /// Loads every unloaded chunk that holds an object `operations` name (changed, or the target of a relationship)
    /// or an object those objects' current relationships point to (what inverse repair changes), pinned while the
    /// result is held (``ChunkPins``): a commit holds it until it is installed.
    ///
    /// - Throws: the error of the first damaged chunk.
    func loadChunks(touchedBy operations: [ChangeOperation]) throws(EventGraphError) -> ChunkPins? {
        // Nothing to load (a replay from the log's start, or every chunk loaded): the targets of every touched
        // object's relationships are not collected — a category's to-many of a million posts, once per post a
        // transaction touches, made a 1M-post replay hold more than 20 GB.
        guard hasUnloadedChunks else { return nil }
        var pins: [LazyColumnChunk] = []
        var references: [ObjectReference] = []
        for operation in operations {
            references.append(operation.object)
            switch operation {
            case .insert(_, let changes), .update(_, let changes):
                for change in changes { references += change.value.references }
            case .relate(_, _, let added, let removed):
                references += added
                references += removed
            case .delete: break
            }
        }
        try loadChunks(holding: references, pinning: &pins)
        var targets: [ObjectReference] = []
        for reference in references where reference.storeIndex == 0 && Int(reference.entityIndex) < tables.count {
            guard let row = row(entityIndex: Int(reference.entityIndex), key: reference.key) else { continue }
            for value in row.values { targets += value.references }
        }
        try loadChunks(holding: targets, pinning: &pins)
        return ChunkPins(pins)
    }

    /// Loads every unloaded chunk that holds one of `objects` (the objects of a transaction's operations): what replaying a transaction writes.
    /// Unlike a commit (``loadChunks(touchedBy:)``), a replay repairs no inverse relationship — a transaction in
    /// the log carries its inverse changes as operations of their own — so the chunks of the objects its
    /// relationships point to stay on disk, and no row is built to find them.
    ///
    /// The chunks stay pinned (decoded, whatever the budget evicts) while the result is held: hold it until the
    /// transaction is applied.
    ///
    /// - Throws: the error of the first damaged chunk.
    func loadChunks(changedBy objects: some Sequence<ObjectReference>) throws(EventGraphError) -> ChunkPins? {
        guard hasUnloadedChunks else { return nil }
        var pins: [LazyColumnChunk] = []
        do {
            for object in objects {
                guard object.storeIndex == 0, Int(object.entityIndex) < tables.count else { continue }
                try tables[Int(object.entityIndex)].load(keys: CollectionOfOne(object.key), pinning: &pins)
            }
        } catch {
            for box in pins { box.unpin() }
            throw error
        }
        return ChunkPins(pins)
    }

    /// Loads and pins (into `pins`) the chunks holding `references`; on an error, unpins every chunk in `pins`.
    private func loadChunks(holding references: [ObjectReference], pinning pins: inout [LazyColumnChunk])
        throws(EventGraphError)
    {
        var keys: [Int: [UInt64]] = [:]
        for reference in references where reference.storeIndex == 0 && Int(reference.entityIndex) < tables.count {
            keys[Int(reference.entityIndex), default: []].append(reference.key)
        }
        do {
            for (entityIndex, keys) in keys { try tables[entityIndex].load(keys: keys, pinning: &pins) }
        } catch {
            for box in pins { box.unpin() }
            pins = []
            throw error
        }
    }

    /// A copy of the state whose versions hold every checkpoint chunk decoded (see
    /// ``EntityColumns/pinningCheckpointChunks()``): what a checkpoint reads, each chunk once, however small the
    /// budget of decoded chunks.
    ///
    /// - Throws: the error of the first damaged chunk.
    func pinningCheckpointChunks() throws(EventGraphError) -> StoreState {
        guard hasUnloadedChunks else { return self }
        var copy = self
        try copy.replaceTables { table throws(EventGraphError) in try table.pinningCheckpointChunks() }
        return copy
    }
}
