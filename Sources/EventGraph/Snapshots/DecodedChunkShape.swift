import LogFormat

/// How the last chunk of an entity decoded from the checkpoint filled its storages, per slot: what the next decode of
/// a chunk of that entity reserves before it appends its values (``ColumnChunk/reserveCapacity(slotCount:shape:)``).
///
/// A chunk's payload gives no column's byte count, so a decode grew every column's arrays by appending — each
/// doubling copied an array and faulted in fresh pages again — and then reallocated them at their size
/// (``ColumnChunk/shrinkToFit()``), a third copy: a profile of the first fetch of every post of a compacted store
/// had half of the values' decoding in those copies and page faults. The chunks of one entity are alike (objects
/// saved one after another), so the one decoded before predicts the next closely; the margin is
/// ``ReservedGrowth``'s, and a value past it grows its array once by an eighth, as a replay's reservations do.
///
/// Only a chunk of at least ``minimumSlotCount`` slots is learned from, so a reservation is at most
/// ``ColumnChunk/slotCapacity`` / ``minimumSlotCount`` times what a decoded chunk really held (its arrays were in
/// memory): a small chunk's values do not scale to a hostile size. Shared by the boxes of the entity's chunks
/// (``CheckpointChunkDecoder``), from any thread.
final class DecodedChunkShape: Sendable {
    /// The fewest slots of a chunk learned from.
    static let minimumSlotCount = 512

    /// One column's storages: whether it holds fixed-width values, and its arena's live bytes and slots.
    struct ColumnShape: Sendable {
        var usesWords: Bool
        var arenaByteCount: Int
        var arenaSlotCount: Int
    }

    /// A decoded chunk's slot count and its columns' shapes.
    struct Shape: Sendable {
        var slotCount: Int
        var columns: [ColumnShape]
    }

    /// A ``LockedValue``, not a `Synchronization.Mutex`: the thread sanitizer cannot see a contended `Mutex` hand its
    /// lock over (see ``PthreadMutex``), and reported this shape's writes as races.
    private let last = LockedValue<Shape?>(nil)

    /// The shape learned last, if any.
    var shape: Shape? { last.withLock { $0 } }

    /// Learns the shape of a chunk just decoded with its values (nothing for one of fewer than
    /// ``minimumSlotCount`` slots).
    func learn(from chunk: ColumnChunk) {
        guard chunk.slotCount >= Self.minimumSlotCount else { return }
        let shape = Shape(slotCount: chunk.slotCount, columns: chunk.columns.map(\.shape))
        last.withLock { $0 = shape }
    }
}

extension Column {
    /// The column's storages, as ``DecodedChunkShape`` learns them.
    var shape: DecodedChunkShape.ColumnShape {
        DecodedChunkShape.ColumnShape(
            usesWords: !words.isEmpty, arenaByteCount: arena.liveByteCount, arenaSlotCount: arena.starts.count)
    }
}
