/// The decoded columns of the checkpoint chunks that a context's objects read last: what a property read of an object
/// whose slot reads a checkpoint chunk through its box (``LazyColumnChunk``) reads, without the box's lock.
///
/// Through the box, every property read took its lock to take the decoded columns (and a retain and a release of
/// them): 40 % of the property reads of a fetch of every post of a compacted store, which ran at ≈ 0.6× the speed of
/// the same fetch from a replayed store. A fetch hands out objects chunk by chunk, so the reads of one chunk's
/// objects follow each other; a few entries (``entryCount``) catch them, and the reads of their related objects,
/// which are in other chunks (a post's title, then its author's name: with one entry, every read missed).
///
/// Each entry keeps its box (so its address, which the reads compare, is not reused while it is kept) and the decoded
/// columns it took, so a context pins at most ``entryCount`` decoded chunks beyond the store's budget of decoded
/// chunks (``DecodedChunkCache``): the budget may evict a box's decoded form meanwhile; the columns held here stay
/// valid (a checkpoint's bytes do not change, so a decode again gives the same values). An entry is replaced in
/// turn; ``release()`` drops them all (``ObjectContext/reset()``; the context's release does too). Reads that hit do
/// not set the box's referenced bit, so the budget's clock may pass over a chunk being read; it then evicts it, and
/// the entry still holds it.
///
/// A context is used from one isolation domain at a time, so the entries need no lock.
struct CheckpointColumnsCache {
    /// How many chunks' columns are held.
    static let entryCount = 4

    /// Each entry's box and columns (what keeps them alive), by entry.
    private var boxes: [LazyColumnChunk?] = Array(repeating: nil, count: entryCount)
    private var columns: [[Column]] = Array(repeating: [], count: entryCount)
    /// What a read compares and reads, by entry: the box's address, the first column, the number of columns.
    private var addresses: [UnsafeRawPointer?] = Array(repeating: nil, count: entryCount)
    private var bases: [UnsafePointer<Column>?] = Array(repeating: nil, count: entryCount)
    private var columnCounts: [Int] = Array(repeating: 0, count: entryCount)
    /// The entry that the next miss replaces.
    private var nextEntry = 0

    /// What ``lookUp(_:reading:)`` found.
    enum Lookup {
        /// An entry is the chunk's: the first of its columns, valid until the entry is replaced.
        case hit(UnsafePointer<Column>)
        /// An entry is the chunk's, which has no column for the property (a later schema's property: read through
        /// the slot, which checks it).
        case noColumn
        /// No entry is the chunk's (``take(_:reading:)`` makes one).
        case miss
    }

    /// Whether an entry holds the columns of the checkpoint chunk whose box is at `address`, to read `property`;
    /// reads the entries and calls nothing (so a caller holds no reference to its context across it).
    @inline(__always)
    func lookUp(_ address: UnsafeRawPointer, reading property: Int) -> Lookup {
        for entry in 0..<Self.entryCount where addresses[entry] == address {
            guard property < columnCounts[entry], let base = bases[entry] else { return .noColumn }
            return .hit(base)
        }
        return .miss
    }

    /// Takes the columns of the box at `address` (which the caller's slot keeps alive) in place of the next entry's:
    /// decoded again if the budget evicted them, or the process ends when the chunk can no longer be read (see
    /// ``LazyColumnChunk/columns(readingProperty:)``).
    ///
    /// The pointer is valid until the entry is replaced (or ``release()``).
    mutating func take(_ address: UnsafeRawPointer, reading property: Int) -> UnsafePointer<Column>? {
        let box = Unmanaged<LazyColumnChunk>.fromOpaque(address).takeUnretainedValue()
        let taken = box.columns(readingProperty: property)
        let entry = nextEntry
        nextEntry = (entry + 1) % Self.entryCount
        boxes[entry] = box
        columns[entry] = taken
        addresses[entry] = address
        columnCounts[entry] = taken.count
        // The address outlives the closure on purpose: the entry holds the array, unchanged, until it is replaced.
        bases[entry] = taken.withUnsafeBufferPointer { $0.baseAddress }
        return property < taken.count ? bases[entry] : nil
    }

    /// Drops every entry (their columns, and their boxes).
    mutating func release() {
        self = CheckpointColumnsCache()
    }

    /// How many entries hold a chunk's columns, for tests.
    var heldChunkCount: Int { boxes.count { $0 != nil } }
}
