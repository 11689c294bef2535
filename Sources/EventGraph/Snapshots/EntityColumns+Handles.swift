import LogFormat

/// One slot of one chunk version: what a handle ``Row`` reads its values from.
///
/// It holds the chunk's column array, so the storages it reads stay alive and unchanged: a commit that later writes
/// the chunk finds the array shared and copies it (and then the columns it writes) first. Reading a value decodes
/// that value only.
///
/// A column is read in place through the array's buffer: read through `Array`'s subscript, each property read copied
/// the whole ``Column`` (a retain and a release of each of its storages), which a profile of fetch-all showed under
/// `storedValue(at:)` ('outlined init with copy of Column').
struct ChunkSlot: Sendable {
    private let columns: [Column]
    private let position: UInt32
    private let count: UInt16

    init(_ chunk: ColumnChunk, position: Int) {
        precondition(chunk.isLive(position), "slot \(position) of a chunk is empty")
        columns = chunk.columns
        self.position = UInt32(position)
        count = chunk.valueCounts[position]
    }

    private init(columns: [Column], position: UInt32, count: UInt16) {
        self.columns = columns
        self.position = position
        self.count = count
    }

    /// The column array the slot reads (a coordinator renumbers a chunk version's references from it once, see
    /// ``ColumnChunk/replacingColumns(_:)``).
    var chunkColumns: [Column] { columns }

    /// The same slot read from other columns of its chunk version, one for one (its references renumbered).
    func replacingColumns(_ columns: [Column]) -> ChunkSlot {
        precondition(columns.count == self.columns.count, "a slot's columns are replaced one for one")
        return ChunkSlot(columns: columns, position: position, count: count)
    }

    /// A column of the buffer, checked (a chunk read from a checkpoint is checked when decoded; this keeps an
    /// unchecked buffer read from ever going past the columns).
    @inline(__always)
    private static func column(_ property: Int, of buffer: UnsafeBufferPointer<Column>) -> UnsafePointer<Column> {
        precondition(property < buffer.count, "property \(property) has no column (\(buffer.count) columns)")
        return buffer.baseAddress! + property
    }

    /// Whether both are the same slot of the same chunk version (the same column array, not equal values).
    func isSame(as other: ChunkSlot) -> Bool {
        guard position == other.position, count == other.count else { return false }
        return columns.withUnsafeBufferPointer { lhs in
            other.columns.withUnsafeBufferPointer { rhs in lhs.baseAddress == rhs.baseAddress }
        }
    }

    /// How many properties the slot's row has (a later schema may have added some).
    var valueCount: Int { Int(count) }

    /// The value of one property, as ``ColumnChunk/row(at:entityIndex:)`` builds it (an absent value is `.null`).
    @inline(__always)
    func value(at property: Int) -> PropertyValue {
        precondition(property < Int(count), "property \(property) is past the \(count) values of the row")
        return columns.withUnsafeBufferPointer { Self.column(property, of: $0).pointee.value(at: Int(position)) }
            ?? .attribute(.null)
    }

    /// The value of one property as an attribute (`.null` for a relationship), without building a
    /// ``PropertyValue``.
    @inline(__always)
    func attributeValue(at property: Int) -> AttributeValue {
        precondition(property < Int(count), "property \(property) is past the \(count) values of the row")
        return columns.withUnsafeBufferPointer {
            Column.attributeValueUnlessRelationship(of: Self.column(property, of: $0), at: Int(position)) ?? .null
        }
    }

    /// The value of one property as an attribute, `nil` for a relationship (``value(at:)``'s attribute, without
    /// building a ``PropertyValue``).
    @inline(__always)
    func attributeValueUnlessRelationship(at property: Int) -> AttributeValue? {
        precondition(property < Int(count), "property \(property) is past the \(count) values of the row")
        return columns.withUnsafeBufferPointer {
            Column.attributeValueUnlessRelationship(of: Self.column(property, of: $0), at: Int(position))
        }
    }
}

extension ColumnChunk {
    /// A row of a live slot that reads its values from this chunk version instead of copying them.
    func rowHandle(at position: Int, entityIndex: Int) -> Row {
        Row(
            entityIndex: entityIndex, key: keys[position], version: versions[position],
            slot: ChunkSlot(self, position: position))
    }

    /// A live slot as a reader holds it: the slot of this chunk version, without a ``Row``.
    @inline(__always)
    func committedRow(at position: Int, entityIndex: Int) -> CommittedRow {
        CommittedRow(
            entityIndex: entityIndex, key: keys[position],
            values: .slot(ChunkSlot(self, position: position), version: versions[position]))
    }
}

extension EntityColumns {
    /// A handle row of a live object (see ``Row``), for readers that keep it.
    func rowHandle(forKey key: UInt64) -> Row? {
        slot(forKey: key).map { rowHandle(atSlot: $0) }
    }

    /// A live object as a reader holds it (a chunk slot, no ``Row``).
    func committedRow(forKey key: UInt64) -> CommittedRow? {
        committedRowAndChunk(forKey: key)?.row
    }

    /// What ``committedRow(inMemoryForKey:)`` finds.
    enum InMemoryLookup {
        /// The object, in a chunk in memory.
        case found(CommittedRow)
        /// No live object has the key.
        case absent
        /// The key may be in a chunk still on disk: look it up in a version taken out of the lock.
        case mayBeOnDisk
    }

    /// A live object's slot when its chunk is in memory, without copying the version (no chunk is read from disk,
    /// so a store can answer a lookup by ID under its lock: a version copied out of the lock costs a retain and a
    /// release of each of its arrays, per lookup).
    @inline(__always)
    func committedRow(inMemoryForKey key: UInt64) -> InMemoryLookup {
        committedRowAndChunk(inMemoryForKey: key).lookup
    }

    /// Calls `body` with each live slot in commit order — every live slot, or those of `slots` (each once however
    /// often it is listed) — as a reader holds it, until `body` returns false. Consecutive slots are mostly in one
    /// chunk: it is taken once per run, not once per slot. `chunkView`, when given, is applied to each chunk taken
    /// (with its index) before its slots are handed out: a coordinator's view with its references renumbered.
    func forEachCommittedRow<Failure: Error>(
        atSlots slots: [Int]?, chunkView: ((_ chunkIndex: Int, ColumnChunk) -> ColumnChunk)? = nil,
        _ body: (CommittedRow) throws(Failure) -> Bool
    ) throws(Failure) {
        guard let slots else {
            for chunkIndex in 0..<chunkCount {
                var chunk = chunk(at: chunkIndex)
                if let chunkView { chunk = chunkView(chunkIndex, chunk) }
                for (wordIndex, word) in chunk.liveBits.enumerated() where word != 0 {
                    var bits = word
                    while bits != 0 {
                        let position = wordIndex &* 64 &+ bits.trailingZeroBitCount
                        guard try body(chunk.committedRow(at: position, entityIndex: entityIndex)) else { return }
                        bits &= bits &- 1
                    }
                }
            }
            return
        }
        var chunkIndex = -1
        var chunk = ColumnChunk.unloaded
        var previous = -1
        for slot in slots where slot != previous {
            if slot / ColumnChunk.slotCapacity != chunkIndex {
                chunkIndex = slot / ColumnChunk.slotCapacity
                chunk = self.chunk(at: chunkIndex)
                if let chunkView { chunk = chunkView(chunkIndex, chunk) }
            }
            guard try body(chunk.committedRow(at: slot % ColumnChunk.slotCapacity, entityIndex: entityIndex))
            else { return }
            previous = slot
        }
    }

    /// ``committedRow(inMemoryForKey:)`` with the index of the chunk that holds the object.
    @inline(__always)
    func committedRowAndChunk(inMemoryForKey key: UInt64) -> (lookup: InMemoryLookup, chunkIndex: Int) {
        guard let slot = directoryHit(key) else {
            return (hasUnloadedChunks && key <= unloadedMaxKeyForLookup ? .mayBeOnDisk : .absent, 0)
        }
        return (.found(residentCommittedRow(atSlot: slot)), slot / ColumnChunk.slotCapacity)
    }

    /// ``committedRow(forKey:)`` with the index of the chunk that holds the object (read from disk if need be).
    func committedRowAndChunk(forKey key: UInt64) -> (row: CommittedRow, chunkIndex: Int)? {
        guard let slot = slot(forKey: key) else { return nil }
        let chunkIndex = slot / ColumnChunk.slotCapacity
        return (
            chunk(at: chunkIndex).committedRow(at: slot % ColumnChunk.slotCapacity, entityIndex: entityIndex),
            chunkIndex
        )
    }

    /// A handle row of a live slot.
    func rowHandle(atSlot slot: Int) -> Row {
        chunk(at: slot / ColumnChunk.slotCapacity).rowHandle(
            at: slot % ColumnChunk.slotCapacity, entityIndex: entityIndex)
    }

    /// The handle rows of the live objects in commit order: no value is copied.
    var liveRowHandles: [Row] {
        var rows: [Row] = []
        rows.reserveCapacity(count)
        forEachCommittedRow(atSlots: nil) { (row: CommittedRow) -> Bool in
            rows.append(row.row)
            return true
        }
        return rows
    }
}

extension StoreState {
    /// A handle row of an object, for readers that keep it (contexts); the commit path reads
    /// ``row(entityIndex:key:)``, whose values are copied, so that the rows it holds while writing a chunk do not
    /// make the write copy the chunk.
    func rowHandle(entityIndex: Int, key: UInt64) -> Row? {
        tables[entityIndex].rowHandle(forKey: key)
    }

    /// ``EntityColumns/committedRow(inMemoryForKey:)`` of an entity's current version, read in place.
    @inline(__always)
    func committedRow(inMemoryForKey key: UInt64, entityIndex: Int) -> EntityColumns.InMemoryLookup {
        tables[entityIndex].committedRow(inMemoryForKey: key)
    }
}
