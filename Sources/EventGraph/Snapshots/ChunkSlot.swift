import LogFormat

/// One slot of one chunk version: what a handle ``Row`` and a fetched object read their values from.
///
/// A slot of a chunk that a commit made (or changed) holds the chunk's column array, so the storages it reads stay
/// alive and unchanged: a commit that later writes the chunk finds the array shared and copies it (and then the
/// columns it writes) first. A slot of a chunk that is still the checkpoint's holds the chunk's box instead
/// (``LazyColumnChunk``): its decoded form lives in the store's ``DecodedChunkCache`` under a byte budget, and a
/// read after an eviction reads, verifies and decodes the chunk again from the checkpoint file — the same bytes, so
/// the same values, whatever is committed after (a commit that changes such a chunk makes a new chunk and leaves
/// the box alone). So a fetch of every object of a large store holds one small handle per object, not every
/// decoded chunk. Reading a value decodes that value only.
///
/// A column is read in place through the array's buffer: read through `Array`'s subscript, each property read copied
/// the whole ``Column`` (a retain and a release of each of its storages), which a profile of fetch-all showed under
/// `storedValue(at:)` ('outlined init with copy of Column').
struct ChunkSlot: Sendable {
    /// Where the slot's columns are: held, or in a checkpoint chunk's box (decoded again after an eviction).
    private enum Storage: Sendable {
        case columns([Column])
        case checkpoint(LazyColumnChunk)
    }

    private let storage: Storage
    private let position: UInt32
    private let count: UInt16

    init(_ chunk: ColumnChunk, position: Int) {
        precondition(chunk.isLive(position), "slot \(position) of a chunk is empty")
        storage = .columns(chunk.columns)
        self.position = UInt32(position)
        count = chunk.valueCounts[position]
    }

    /// A slot of a checkpoint chunk that no commit has changed, read through its box (`chunk` is its decoded form,
    /// which the slot does not keep).
    init(_ chunk: ColumnChunk, position: Int, checkpointChunk: LazyColumnChunk) {
        precondition(chunk.isLive(position), "slot \(position) of a chunk is empty")
        storage = .checkpoint(checkpointChunk)
        self.position = UInt32(position)
        count = chunk.valueCounts[position]
    }

    /// A live slot of `chunk` that reads `columns`, other columns of the chunk one for one (a coordinator's, with
    /// their references renumbered, see ``replacingColumns(_:)``).
    init(_ chunk: ColumnChunk, position: Int, readingColumns columns: [Column]) {
        precondition(chunk.isLive(position), "slot \(position) of a chunk is empty")
        precondition(columns.count == chunk.columns.count, "a slot's columns are replaced one for one")
        storage = .columns(columns)
        self.position = UInt32(position)
        count = chunk.valueCounts[position]
    }

    private init(columns: [Column], position: UInt32, count: UInt16) {
        storage = .columns(columns)
        self.position = position
        self.count = count
    }

    /// The column array the slot reads (a coordinator renumbers a chunk version's references from it once, see
    /// ``ColumnChunk/replacingColumns(_:)``); a checkpoint chunk's is decoded again if it was evicted (the process
    /// ends when it can no longer be read, see ``LazyColumnChunk/columns(readingProperty:)``).
    var chunkColumns: [Column] {
        switch storage {
        case .columns(let columns): columns
        case .checkpoint(let box): box.columns(readingProperty: nil)
        }
    }

    /// Whether the slot reads a checkpoint chunk through its box (its decoded form may be evicted), for tests.
    var readsThroughCheckpointChunk: Bool { checkpointChunk != nil }

    /// The checkpoint chunk's box the slot reads through (its decoded form may be evicted), if it reads one.
    var checkpointChunk: LazyColumnChunk? {
        if case .checkpoint(let box) = storage { return box }
        return nil
    }

    /// The same slot read from other columns of its chunk version, one for one (its references renumbered).
    func replacingColumns(_ columns: [Column]) -> ChunkSlot {
        precondition(columns.count == chunkColumns.count, "a slot's columns are replaced one for one")
        return ChunkSlot(columns: columns, position: position, count: count)
    }

    /// Calls `body` with the slot's columns in place, to read `property`: held, or taken from the checkpoint chunk's
    /// box (one lock to take them, none while `body` reads). A checkpoint chunk that can no longer be read (its
    /// decoded form was evicted, and the read again fails) ends the process with a message naming the file, the
    /// entity, the chunk, its byte offset and the property: a getter cannot throw, and a value read as null would be
    /// a silent wrong answer.
    @inline(__always)
    private func withColumns<R>(readingProperty property: Int, _ body: (UnsafeBufferPointer<Column>) -> R) -> R {
        switch storage {
        case .columns(let columns): return columns.withUnsafeBufferPointer(body)
        case .checkpoint(let box): return box.columns(readingProperty: property).withUnsafeBufferPointer(body)
        }
    }

    /// A column of the buffer, checked: `nil` past the buffer (a row of a later schema with more properties than
    /// the chunk's columns).
    @inline(__always)
    private static func column(_ property: Int, of buffer: UnsafeBufferPointer<Column>) -> UnsafePointer<Column>? {
        guard property < buffer.count, let base = buffer.baseAddress else { return nil }
        return base + property
    }

    /// Whether both are the same slot of the same chunk version (the same column array or checkpoint chunk, not
    /// equal values).
    func isSame(as other: ChunkSlot) -> Bool {
        guard position == other.position, count == other.count else { return false }
        switch (storage, other.storage) {
        case (.columns(let lhs), .columns(let rhs)):
            return lhs.withUnsafeBufferPointer { lhs in
                rhs.withUnsafeBufferPointer { rhs in lhs.baseAddress == rhs.baseAddress }
            }
        case (.checkpoint(let lhs), .checkpoint(let rhs)): return lhs === rhs
        default: return false
        }
    }

    /// How many properties the slot's row has (a later schema may have added some).
    var valueCount: Int { Int(count) }

    /// The value of one property, as ``ColumnChunk/row(at:entityIndex:)`` builds it (an absent value is `.null`).
    @inline(__always)
    func value(at property: Int) -> PropertyValue {
        precondition(property < Int(count), "property \(property) is past the \(count) values of the row")
        return withColumns(readingProperty: property) {
            Self.column(property, of: $0)?.pointee.value(at: Int(position))
        }
            ?? .attribute(.null)
    }

    /// The value of one property as an attribute (`.null` for a relationship), without building a
    /// ``PropertyValue``.
    @inline(__always)
    func attributeValue(at property: Int) -> AttributeValue {
        precondition(property < Int(count), "property \(property) is past the \(count) values of the row")
        return withColumns(readingProperty: property) { buffer in
            guard let column = Self.column(property, of: buffer) else { return .null }
            return Column.attributeValueUnlessRelationship(of: column, at: Int(position)) ?? .null
        }
    }

    /// The value of one property as an attribute, `nil` for a relationship (``value(at:)``'s attribute, without
    /// building a ``PropertyValue``).
    @inline(__always)
    func attributeValueUnlessRelationship(at property: Int) -> AttributeValue? {
        precondition(property < Int(count), "property \(property) is past the \(count) values of the row")
        return withColumns(readingProperty: property) { buffer in
            guard let column = Self.column(property, of: buffer) else { return .null }
            return Column.attributeValueUnlessRelationship(of: column, at: Int(position))
        }
    }
}

extension ChunkSlot {
    /// The slot's columns in place (see ``HeldSlotColumns``), or its checkpoint chunk's box: valid while this slot,
    /// or a copy of it, is held.
    var heldColumns: HeldSlotColumns? {
        let columns: [Column]
        switch storage {
        case .columns(let held): columns = held
        case .checkpoint(let box): return HeldSlotColumns(checkpointChunk: box, position: position, valueCount: count)
        }
        // The address outlives the closure on purpose: the array is immutable while a slot holds it (a commit that
        // writes the chunk finds it shared and copies it), and whoever keeps the address keeps the slot.
        guard let base = columns.withUnsafeBufferPointer({ $0.baseAddress }) else { return nil }
        return HeldSlotColumns(
            base: base, position: position, readableCount: UInt16(truncatingIfNeeded: min(Int(count), columns.count)))
    }
}
