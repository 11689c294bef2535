/// The rows a changeset produces, computed before anything is installed: the final row (or `nil` for deleted) of
/// every object the changeset touches, in first-touch order (so installation is deterministic), found by key.
///
/// The changes are one array in first-touch order, and a ``ProbingTable`` maps each key to its position without
/// `Hasher`: a bulk save's bookkeeping (staging, the queue's overlay, uniqueness, installation, the result) walks
/// the array instead of looking every key up in a dictionary, and a lookup costs no SipHash run.
struct StagedChanges {
    /// One touched object: its key, entity and final row (`nil` when deleted).
    struct Change {
        var key: UInt64
        var entityIndex: Int
        var row: Row?
    }

    /// One unique tuple of a new row, taken while the row was staged (see ``newTuples``).
    struct NewTuple {
        var tuple: UniqueKey
        /// The row's position in ``changes``.
        var position: Int
        /// The constraint's position in the row's entity's ``EntityDescription/uniqueConstraints``.
        var ordinal: Int
    }

    /// The changes in first-touch order.
    private(set) var changes: [Change] = []
    private var positions = ProbingTable<StagedPosition>()
    /// The unique tuples of the new rows, in the order of ``changes`` and of each entity's constraints, when the
    /// staging took them (``StoreState/stageInsertion(_:model:version:overlay:checksInverses:)`` does, while it reads
    /// each row's values); `nil` otherwise, and the uniqueness check reads them from the rows.
    var newTuples: [NewTuple]?

    /// The number of touched objects.
    var count: Int { changes.count }

    /// Makes room for `capacity` touched objects.
    mutating func reserveCapacity(_ capacity: Int) {
        changes.reserveCapacity(capacity)
        positions.reserveCapacity(capacity)
    }

    /// The final row of a touched object (`row` is `nil` when deleted); `nil` when the changeset does not touch it.
    @inline(__always)
    subscript(key: UInt64) -> (entityIndex: Int, row: Row?)? {
        guard let position = positions[key] else { return nil }
        let change = changes[position.position]
        return (change.entityIndex, change.row)
    }

    /// Sets the final row of an object; an object touched before keeps its place in the order. Forgets
    /// ``newTuples``, which would miss the row's.
    mutating func put(key: UInt64, entityIndex: Int, row: Row?) {
        newTuples = nil
        if let position = positions[key] {
            changes[position.position] = Change(key: key, entityIndex: entityIndex, row: row)
            return
        }
        positions.update(StagedPosition(key: key, position: changes.count))
        changes.append(Change(key: key, entityIndex: entityIndex, row: row))
    }
}

/// A key's position in ``StagedChanges/changes``, as its ``ProbingTable`` holds it.
private struct StagedPosition: ProbingTableEntry {
    var key: UInt64
    /// The position; -1 for an empty place of the table.
    var position: Int

    static var empty: StagedPosition { StagedPosition(key: 0, position: -1) }

    var isEmpty: Bool { position < 0 }
}
