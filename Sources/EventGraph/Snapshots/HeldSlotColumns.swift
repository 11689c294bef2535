import LogFormat

/// The columns of a slot that holds them, read in place by the object that holds the slot (see
/// ``ManagedObject/committedColumns``).
///
/// The address of the chunk version's column array: the object keeps the array alive and unchanged by holding the
/// slot itself (in ``ManagedObject/committed``, which sets this when it is set), so a property read copies nothing.
/// Through the slot, each read copied it out of the object first: a retain and a release of the column array per
/// property read, a tenth of a fetch that reads every post in h71's profile. A slot that reads a checkpoint chunk
/// through its box has none (the box's decoded form may be evicted and decoded again elsewhere).
struct HeldSlotColumns {
    /// The first of the chunk version's columns.
    let base: UnsafePointer<Column>
    /// The slot's position in its chunk.
    let position: UInt32
    /// How many properties are read here: those below both the slot's value count and the chunk's column count
    /// (any other is read through the slot, which checks it).
    let readableCount: UInt16

    /// The value of a property below ``readableCount`` as an attribute, `nil` for a relationship (as
    /// ``ChunkSlot/attributeValueUnlessRelationship(at:)`` reads it).
    @inline(__always)
    func attributeValueUnlessRelationship(at property: Int) -> AttributeValue? {
        precondition(property < Int(readableCount), "property \(property) is not read in place")
        return Column.attributeValueUnlessRelationship(of: base + property, at: Int(position))
    }

    /// Starts loading what a read of `property` reads first, without waiting (see
    /// ``Column/prefetchValue(of:at:)``); nothing for a property not read in place.
    @inline(__always)
    func prefetchValue(at property: Int) {
        guard property >= 0, property < Int(readableCount) else { return }
        Column.prefetchValue(of: base + property, at: Int(position))
    }
}

extension HeldSlotColumns {
    /// Starts loading the bytes of `property`'s string or binary value, without waiting (see
    /// ``Column/prefetchBytes(of:at:)``); nothing for another value or a property not read in place.
    @inline(__always)
    func prefetchBytes(at property: Int) {
        guard property >= 0, property < Int(readableCount) else { return }
        Column.prefetchBytes(of: base + property, at: Int(position))
    }
}

extension CommittedValues {
    /// The columns of a slot that holds them (see ``HeldSlotColumns``); `nil` for a row or a checkpoint chunk's slot.
    var heldColumns: HeldSlotColumns? {
        guard case .slot(let slot, _) = self else { return nil }
        return slot.heldColumns
    }
}
