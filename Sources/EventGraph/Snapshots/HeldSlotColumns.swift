import LogFormat

/// The columns of a slot, read in place by the object that holds the slot (see ``ManagedObject/committedColumns``).
///
/// For a slot that holds its columns: the address of the chunk version's column array. The object keeps the array
/// alive and unchanged by holding the slot itself (in ``ManagedObject/committed``, which sets this when it is set), so
/// a property read copies nothing. Through the slot, each read copied it out of the object first: a retain and a
/// release of the column array per property read, a tenth of a fetch that reads every post in h71's profile.
///
/// For a slot that reads a checkpoint chunk through its box (``LazyColumnChunk``, whose decoded form may be evicted
/// and decoded again elsewhere): the box's address, which the slot keeps alive. Its columns are then read through the
/// context's ``CheckpointColumnsCache`` (``ObjectContext/checkpointColumns``), which holds the last boxes' decoded
/// columns: through the box, every property read took its lock, 40 % of the property reads of a fetch of every post
/// of a compacted store.
struct HeldSlotColumns {
    /// The first of the chunk version's columns, or the checkpoint chunk's box (unretained).
    private let address: UnsafeRawPointer
    /// The slot's position in its chunk, and ``checkpointBit`` for a slot read through a checkpoint chunk's box.
    private let positionAndSource: UInt32
    /// How many properties are read here: those below both the slot's value count and the chunk's column count
    /// (any other is read through the slot, which checks it). For a checkpoint chunk's slot, the slot's value count
    /// (the cache checks the column count).
    let readableCount: UInt16

    private static let checkpointBit: UInt32 = 1 << 31

    /// A slot's held columns.
    init(base: UnsafePointer<Column>, position: UInt32, readableCount: UInt16) {
        precondition(position < Self.checkpointBit, "a chunk's positions are below 2^31")
        address = UnsafeRawPointer(base)
        positionAndSource = position
        self.readableCount = readableCount
    }

    /// A slot of a checkpoint chunk read through `box` (which the slot keeps alive).
    init(checkpointChunk box: LazyColumnChunk, position: UInt32, valueCount: UInt16) {
        precondition(position < Self.checkpointBit, "a chunk's positions are below 2^31")
        address = UnsafeRawPointer(Unmanaged.passUnretained(box).toOpaque())
        positionAndSource = position | Self.checkpointBit
        readableCount = valueCount
    }

    /// The slot's position in its chunk.
    @inline(__always)
    var position: Int { Int(positionAndSource & ~Self.checkpointBit) }

    /// Whether the columns are a checkpoint chunk's, read through its box (``checkpointChunkAddress``), not held.
    @inline(__always)
    var readsThroughCheckpointChunk: Bool { positionAndSource & Self.checkpointBit != 0 }

    /// The held columns' first; `nil` for a slot read through a checkpoint chunk's box.
    @inline(__always)
    var base: UnsafePointer<Column>? {
        readsThroughCheckpointChunk ? nil : address.assumingMemoryBound(to: Column.self)
    }

    /// The checkpoint chunk's box, unretained (the slot keeps it alive); `nil` for held columns.
    @inline(__always)
    var checkpointChunkAddress: UnsafeRawPointer? { readsThroughCheckpointChunk ? address : nil }

    /// The value of a property below ``readableCount`` as an attribute, `nil` for a relationship (as
    /// ``ChunkSlot/attributeValueUnlessRelationship(at:)`` reads it), read from `base`: ``base``, or the checkpoint
    /// chunk's columns (``CheckpointColumnsCache``).
    @inline(__always)
    func attributeValueUnlessRelationship(at property: Int, in base: UnsafePointer<Column>) -> AttributeValue? {
        precondition(property < Int(readableCount), "property \(property) is not read in place")
        return Column.attributeValueUnlessRelationship(of: base + property, at: position)
    }

    /// The value of a property below ``readableCount``, as ``ChunkSlot/value(at:)`` reads it (an absent value is
    /// `.null`), read from `base` (see ``attributeValueUnlessRelationship(at:in:)``).
    @inline(__always)
    func value(at property: Int, in base: UnsafePointer<Column>) -> PropertyValue {
        precondition(property < Int(readableCount), "property \(property) is not read in place")
        return (base + property).pointee.value(at: position) ?? .attribute(.null)
    }

    /// Starts loading what a read of `property` reads first, without waiting (see
    /// ``Column/prefetchValue(of:at:)``); nothing for a property not read in place or a checkpoint chunk's slot.
    @inline(__always)
    func prefetchValue(at property: Int) {
        guard property >= 0, property < Int(readableCount), let base else { return }
        Column.prefetchValue(of: base + property, at: position)
    }
}

extension HeldSlotColumns {
    /// Starts loading the bytes of `property`'s string or binary value, without waiting (see
    /// ``Column/prefetchBytes(of:at:)``); nothing for another value, a property not read in place or a checkpoint
    /// chunk's slot.
    @inline(__always)
    func prefetchBytes(at property: Int) {
        guard property >= 0, property < Int(readableCount), let base else { return }
        Column.prefetchBytes(of: base + property, at: position)
    }
}

extension CommittedValues {
    /// The columns of a slot, held or read through a checkpoint chunk's box (see ``HeldSlotColumns``); `nil` for a
    /// row.
    var heldColumns: HeldSlotColumns? {
        guard case .slot(let slot, _) = self else { return nil }
        return slot.heldColumns
    }
}
