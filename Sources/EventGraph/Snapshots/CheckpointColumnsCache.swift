/// The decoded columns of the checkpoint chunk that a context's objects read last: what a property read of an object
/// whose slot reads a checkpoint chunk through its box (``LazyColumnChunk``) reads, without the box's lock.
///
/// Through the box, every property read took its lock to take the decoded columns (and a retain and a release of
/// them): 40 % of the property reads of a fetch of every post of a compacted store, which ran at ≈ 0.6× the speed of
/// the same fetch from a replayed store. A fetch hands out objects chunk by chunk, so the reads of one chunk's
/// objects follow each other; one entry catches them.
///
/// The entry keeps the box (so its address, which the reads compare, is not reused while it is kept) and the
/// decoded columns it took, so a context pins at most one decoded chunk beyond the store's budget of decoded chunks
/// (``DecodedChunkCache``): the budget may evict the box's decoded form meanwhile; the columns held here stay
/// valid (a checkpoint's bytes do not change, so a decode again gives the same values). ``release()`` drops it
/// (``ObjectContext/reset()``; the context's release does too). Reads that hit it do not set the box's referenced
/// bit, so the budget's clock may pass over the chunk being read; it then evicts it, and this entry still holds it.
///
/// A context is used from one isolation domain at a time, so the entry needs no lock.
struct CheckpointColumnsCache {
    private var box: LazyColumnChunk?
    private var boxAddress: UnsafeRawPointer?
    private var columns: [Column] = []
    private var base: UnsafePointer<Column>?
    private var columnCount = 0

    /// What ``lookUp(_:reading:)`` found.
    enum Lookup {
        /// The entry is the chunk's: the first of its columns, valid until the entry is replaced.
        case hit(UnsafePointer<Column>)
        /// The entry is the chunk's, which has no column for the property (a later schema's property: read through
        /// the slot, which checks it).
        case noColumn
        /// The entry is another chunk's, or none (``take(_:reading:)`` replaces it).
        case miss
    }

    /// Whether the entry holds the columns of the checkpoint chunk whose box is at `address`, to read `property`;
    /// reads the entry and calls nothing (so a caller holds no reference to its context across it).
    @inline(__always)
    func lookUp(_ address: UnsafeRawPointer, reading property: Int) -> Lookup {
        guard address == boxAddress else { return .miss }
        guard property < columnCount, let base else { return .noColumn }
        return .hit(base)
    }

    /// Takes the columns of the box at `address` (which the caller's slot keeps alive) in place of the entry's:
    /// decoded again if the budget evicted them, or the process ends when the chunk can no longer be read (see
    /// ``LazyColumnChunk/columns(readingProperty:)``).
    ///
    /// The pointer is valid until the entry is replaced (or ``release()``).
    mutating func take(_ address: UnsafeRawPointer, reading property: Int) -> UnsafePointer<Column>? {
        let box = Unmanaged<LazyColumnChunk>.fromOpaque(address).takeUnretainedValue()
        let columns = box.columns(readingProperty: property)
        self.box = box
        boxAddress = address
        self.columns = columns
        columnCount = columns.count
        // The address outlives the closure on purpose: the entry holds the array, unchanged, until it is replaced.
        base = columns.withUnsafeBufferPointer { $0.baseAddress }
        return property < columnCount ? base : nil
    }

    /// Drops the entry (its columns, and its box).
    mutating func release() {
        self = CheckpointColumnsCache()
    }

    /// Whether the entry holds a chunk's columns, for tests.
    var holdsColumns: Bool { box != nil }
}
