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

    /// For each entity, the indices of its relationship properties (the only columns renumbered).
    private let relationshipProperties: [[Int]]
    /// By entity, then by chunk index.
    private let entries: LockedValue<[[Entry?]]>

    init(relationshipProperties: [[Int]]) {
        self.relationshipProperties = relationshipProperties
        entries = LockedValue(Array(repeating: [], count: relationshipProperties.count))
    }

    /// The columns of a chunk version of an entity with its references in the coordinator's numbering: the columns
    /// themselves when `numbering` is the store's own. With `keeping` false, a chunk not held already is renumbered
    /// without being kept (a scan of every chunk once, such as the reference cleanup on open, must not pin them).
    func columns(
        _ source: [Column], entityIndex: Int, chunkIndex: Int, numbering: StoreNumbering, keeping: Bool = true
    ) -> [Column] {
        if numbering.isIdentity || relationshipProperties[entityIndex].isEmpty { return source }
        return entries.withLock { entries in
            if chunkIndex < entries[entityIndex].count, let entry = entries[entityIndex][chunkIndex],
                Self.sameStorage(entry.source, source)
            {
                return entry.renumbered
            }
            var renumbered = source
            for property in relationshipProperties[entityIndex] where property < source.count {
                renumbered[property] = source[property].renumberingStores(numbering.coordinatorIndices)
            }
            guard keeping else { return renumbered }
            if chunkIndex >= entries[entityIndex].count {
                entries[entityIndex].append(
                    contentsOf: repeatElement(nil, count: chunkIndex + 1 - entries[entityIndex].count))
            }
            entries[entityIndex][chunkIndex] = Entry(source: source, renumbered: renumbered)
            return renumbered
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

    /// A committed row of the store (a slot of the chunk at `chunkIndex`, or a row) in the coordinator's numbering.
    func committedRow(_ row: CommittedRow, chunkIndex: Int, numbering: StoreNumbering) -> CommittedRow {
        switch row.values {
        case .slot(let slot, let version):
            let source = slot.chunkColumns
            let renumbered = columns(source, entityIndex: row.entityIndex, chunkIndex: chunkIndex, numbering: numbering)
            if Self.sameStorage(renumbered, source) { return row }
            return CommittedRow(
                entityIndex: row.entityIndex, key: row.key,
                values: .slot(slot.replacingColumns(renumbered), version: version))
        case .row(let stored):
            let hasRelationships = !relationshipProperties[row.entityIndex].isEmpty
            return CommittedRow(numbering.toCoordinator(stored, hasRelationships: hasRelationships))
        }
    }

    /// How many chunk versions are held renumbered (for tests).
    var entryCount: Int { entries.withLock { $0.reduce(0) { $0 + $1.count { $0 != nil } } } }

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
        chunks.chunk(chunk, entityIndex: entityIndex, chunkIndex: chunkIndex, numbering: numbering, keeping: keepsChunks)
    }
}
