import LogFormat

/// One mounted store's chunks as a coordinator hands them out: the relationship columns of each chunk version with
/// their references in the coordinator's numbering, made once per chunk version and shared by every reader.
///
/// A store numbers the stores its references point into by its own table (``StoreNumbering``); an object read
/// through a coordinator must read them in the coordinator's. Renumbering each object's values made a ``Row`` per
/// object (a handle row, its values copied and translated, a second row), where an object of one store holds only a
/// chunk slot. Here the chunk's relationship columns are renumbered once, and a slot of the renumbered chunk reads
/// the coordinator's numbering directly: objects fetched, faulted or looked up through a coordinator hold slots, and
/// a ``Row`` is made only when something needs one (a save's read set, a merge, a conflict), as for one store.
///
/// Each entry keeps the source columns it was made from: while it does, their array is shared, so a commit that
/// writes the chunk copies it first (as it does for any reader holding a slot), and an array with the same storage
/// is the same chunk version. A later version of the chunk replaces the entry. A numbering that grew since the
/// entry was made renumbers the chunk the same way: a store's table only grows and never renumbers, and a chunk
/// version names only stores its table held when it was written.
final class RenumberedChunks: Sendable {
    private struct Entry: Sendable {
        let source: [Column]
        let renumbered: [Column]
    }

    private struct State: Sendable {
        /// The store's numbering as last made (see ``numbering(covering:make:)``).
        var numbering: StoreNumbering?
        /// By entity, then by chunk index.
        var entries: [[Entry?]]
    }

    /// For each entity, the indices of its relationship properties (the only columns renumbered).
    private let relationshipProperties: [[Int]]
    private let state: LockedValue<State>

    init(relationshipProperties: [[Int]]) {
        self.relationshipProperties = relationshipProperties
        state = LockedValue(State(entries: Array(repeating: [], count: relationshipProperties.count)))
    }

    /// Runs `body` with the store's numbering, covering a table of at least `tableCount` stores (as read under the
    /// store's lock with the rows it numbers), and the state, under the lock. The numbering is kept, and remade by
    /// `make` (the store's current table, which only grows) only when the store's table grew: a lookup builds no
    /// array and hashes no store UUID. `make` runs outside the lock.
    private func withNumbering<R>(
        covering tableCount: Int, make: () -> StoreNumbering, _ body: (StoreNumbering, inout State) -> R
    ) -> R {
        var made: StoreNumbering?
        while true {
            let result: R? = state.withLock { state in
                if let made, (state.numbering?.tableCount ?? 0) < made.tableCount { state.numbering = made }
                guard let numbering = state.numbering, numbering.tableCount >= tableCount else { return nil }
                return body(numbering, &state)
            }
            if let result { return result }
            made = make()
        }
    }

    /// The store's numbering, covering a table of at least `tableCount` stores (see ``withNumbering``).
    func numbering(covering tableCount: Int, make: () -> StoreNumbering) -> StoreNumbering {
        withNumbering(covering: tableCount, make: make) { numbering, _ in numbering }
    }

    /// The columns of a chunk version of an entity with its references in the coordinator's numbering: the columns
    /// themselves when `numbering` is the store's own. With `keeping` false, a chunk not held already is renumbered
    /// without being kept (a scan of every chunk once, such as the reference cleanup on open, must not pin them).
    func columns(
        _ source: [Column], entityIndex: Int, chunkIndex: Int, numbering: StoreNumbering, keeping: Bool = true
    ) -> [Column] {
        if numbering.isIdentity || relationshipProperties[entityIndex].isEmpty { return source }
        return state.withLock { state in
            renumbered(
                source, entityIndex: entityIndex, chunkIndex: chunkIndex, numbering: numbering, keeping: keeping,
                in: &state)
        }
    }

    private func renumbered(
        _ source: [Column], entityIndex: Int, chunkIndex: Int, numbering: StoreNumbering, keeping: Bool,
        in state: inout State
    ) -> [Column] {
        if chunkIndex < state.entries[entityIndex].count, let entry = state.entries[entityIndex][chunkIndex],
            Self.sameStorage(entry.source, source)
        {
            return entry.renumbered
        }
        var renumbered = source
        for property in relationshipProperties[entityIndex] where property < source.count {
            renumbered[property] = source[property].renumberingStores(numbering.coordinatorIndices)
        }
        guard keeping else { return renumbered }
        if chunkIndex >= state.entries[entityIndex].count {
            state.entries[entityIndex].append(
                contentsOf: repeatElement(nil, count: chunkIndex + 1 - state.entries[entityIndex].count))
        }
        state.entries[entityIndex][chunkIndex] = Entry(source: source, renumbered: renumbered)
        return renumbered
    }

    /// ``columns(_:entityIndex:chunkIndex:numbering:keeping:)`` with the numbering that covers a table of
    /// `tableCount` stores (made by `make` when the kept one does not): one lock for the numbering and the chunk.
    /// Called under a store's lock by a lookup (see `Store.committedRow(inMemoryForKey:entityIndex:viewingColumns:)`),
    /// so `make` must take no store's lock, and this lock is never held while one is taken.
    func columns(
        _ source: [Column], entityIndex: Int, chunkIndex: Int, tableCount: Int, numbering make: () -> StoreNumbering
    ) -> [Column] {
        if relationshipProperties[entityIndex].isEmpty { return source }
        return withNumbering(covering: tableCount, make: make) { numbering, state in
            numbering.isIdentity
                ? source
                : renumbered(
                    source, entityIndex: entityIndex, chunkIndex: chunkIndex, numbering: numbering, keeping: true,
                    in: &state)
        }
    }

    /// A chunk version of an entity with its references in the coordinator's numbering.
    func chunk(
        _ chunk: ColumnChunk, entityIndex: Int, chunkIndex: Int, numbering: StoreNumbering, keeping: Bool = true
    ) -> ColumnChunk {
        let renumbered = columns(
            chunk.columns, entityIndex: entityIndex, chunkIndex: chunkIndex, numbering: numbering, keeping: keeping)
        return Self.sameStorage(renumbered, chunk.columns) ? chunk : chunk.replacingColumns(renumbered)
    }

    /// A committed row of the store (a slot of the chunk at `chunkIndex`, or a row) in the coordinator's numbering,
    /// which covers a table of `tableCount` stores (made by `numbering` when the kept one does not): one lock for
    /// the numbering and the chunk.
    func committedRow(
        _ row: CommittedRow, chunkIndex: Int, tableCount: Int, numbering make: () -> StoreNumbering
    ) -> CommittedRow {
        let hasRelationships = !relationshipProperties[row.entityIndex].isEmpty
        switch row.values {
        case .slot(let slot, let version):
            guard hasRelationships else { return row }
            let source = slot.chunkColumns
            let columns = withNumbering(covering: tableCount, make: make) { numbering, state in
                numbering.isIdentity
                    ? source
                    : renumbered(
                        source, entityIndex: row.entityIndex, chunkIndex: chunkIndex, numbering: numbering,
                        keeping: true, in: &state)
            }
            if Self.sameStorage(columns, source) { return row }
            return CommittedRow(
                entityIndex: row.entityIndex, key: row.key,
                values: .slot(slot.replacingColumns(columns), version: version))
        case .row(let stored):
            let numbering = numbering(covering: tableCount, make: make)
            return CommittedRow(numbering.toCoordinator(stored, hasRelationships: hasRelationships))
        }
    }

    /// How many chunk versions are held renumbered (for tests).
    var entryCount: Int { state.withLock { $0.entries.reduce(0) { $0 + $1.count { $0 != nil } } } }

    /// Whether two column arrays are the same storage (not merely equal).
    private static func sameStorage(_ lhs: [Column], _ rhs: [Column]) -> Bool {
        lhs.withUnsafeBufferPointer { lhs in rhs.withUnsafeBufferPointer { rhs in lhs.baseAddress == rhs.baseAddress } }
    }
}

/// The renumbering a batch of slots read through a coordinator applies to each chunk it takes.
struct ChunkRenumbering: Sendable {
    let chunks: RenumberedChunks
    let numbering: StoreNumbering
    /// Whether chunks renumbered for the batch are kept for later readers (see ``RenumberedChunks/columns``).
    var keepsChunks = true

    /// A chunk of the batch's version in the coordinator's numbering.
    func chunk(_ chunk: ColumnChunk, entityIndex: Int, chunkIndex: Int) -> ColumnChunk {
        chunks.chunk(
            chunk, entityIndex: entityIndex, chunkIndex: chunkIndex, numbering: numbering, keeping: keepsChunks)
    }
}
