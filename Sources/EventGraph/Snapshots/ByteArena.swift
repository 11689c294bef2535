internal import CPrefetch
import LogFormat

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The bytes of one column's strings and small binaries in one chunk: one buffer, and per slot where its bytes
/// start and how many there are.
///
/// A changed value is appended and the old bytes become garbage (so unchanged slots keep their offsets); the arena
/// is rewritten once the garbage outweighs the live bytes. A substring scan runs over the buffer, not over `String`s.
struct ByteArena: Sendable {
    private(set) var bytes: [UInt8] = []
    private(set) var starts: [UInt32] = []
    private(set) var byteCounts: [UInt32] = []
    private var garbageByteCount = 0
    /// Whether every byte in the buffer is ASCII (garbage included), so a byte search agrees with `String`'s.
    private(set) var isASCII = true
    /// Whether the buffer's capacity was reserved from a prediction and not outgrown yet (see ``ReservedGrowth``).
    private var bytesAreReserved = false

    /// The most bytes one chunk's arena holds before its offsets would overflow.
    static let maxByteCount = Int(UInt32.max)

    /// Calls `body` with the bytes of a slot (empty for a slot never written).
    @inline(__always)
    func withBytes<R>(at slot: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        withUnsafePointer(to: self) { Self.withBytes(of: $0, at: slot, body) }
    }

    /// Calls `body` with the bytes of a slot of the arena at `arena`, read in place: a method called on a pointee
    /// (`column.pointee.arena.withBytes`) copies the arena first, a retain and a release of each of its three arrays
    /// per value read (h63's profile of fetch-all: 15 % of the fetch and its reads).
    @inline(__always)
    static func withBytes<R>(
        of arena: UnsafePointer<ByteArena>, at slot: Int, _ body: (UnsafeRawBufferPointer) -> R
    ) -> R {
        guard slot < arena.pointee.starts.count else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        let start = Int(arena.pointee.starts[slot])
        let count = Int(arena.pointee.byteCounts[slot])
        // The buffer's address is taken in a closure that calls nothing and used after it: `body` (a `String` made
        // from the bytes calls into the runtime) ran inside it, and the array was retained and released around it for
        // every value read (h71's profile of fetch-all: 8 % of its samples). The arena at `arena` is the caller's,
        // alive and unchanged while it reads.
        let buffer = arena.pointee.bytes.withUnsafeBytes { $0 }
        return body(UnsafeRawBufferPointer(rebasing: buffer[start..<start + count]))
    }

    /// Starts loading a slot's bytes in the arena at `arena` (their first and last cache lines), without waiting;
    /// reads the slot's offset and length, which should be in the cache (see ``prefetchOffsets(of:at:)``). Nothing
    /// for a slot without bytes.
    @inline(__always)
    static func prefetchBytes(of arena: UnsafePointer<ByteArena>, at slot: Int) {
        guard slot >= 0, slot < arena.pointee.starts.count, slot < arena.pointee.byteCounts.count else { return }
        let start = Int(arena.pointee.starts[slot])
        let count = Int(arena.pointee.byteCounts[slot])
        guard count > 0, let base = arena.pointee.bytes.withUnsafeBytes({ $0.baseAddress }),
            start <= arena.pointee.bytes.count - count
        else { return }
        eg_prefetch(base + start)
        eg_prefetch(base + start + count - 1)
    }

    /// Starts loading a slot's offset and length in the arena at `arena`, without waiting (see
    /// ``Column/prefetchValue(of:at:)``).
    @inline(__always)
    static func prefetchOffsets(of arena: UnsafePointer<ByteArena>, at slot: Int) {
        arena.pointee.starts.prefetchElement(at: slot)
        arena.pointee.byteCounts.prefetchElement(at: slot)
    }

    /// Whether a slot holds exactly these bytes (`memcmp`: a commit or a replay that rewrites a row compares each of
    /// its unchanged strings this way, a post's body included).
    func holds(_ candidate: UnsafeRawBufferPointer, at slot: Int) -> Bool {
        withBytes(at: slot) { held in
            guard held.count == candidate.count else { return false }
            guard let heldStart = held.baseAddress, let candidateStart = candidate.baseAddress else { return true }
            return memcmp(heldStart, candidateStart, held.count) == 0
        }
    }

    /// Whether every byte is below 0x80, eight at a time.
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let wordCount = bytes.count / 8
        var high: UInt64 = 0
        for index in 0..<wordCount { high |= bytes.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self) }
        for index in wordCount * 8..<bytes.count { high |= UInt64(bytes[index]) }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// The bytes of the live values (the buffer without its garbage).
    var liveByteCount: Int { bytes.count - garbageByteCount }

    /// Makes room for `byteCount` bytes in `slotCount` slots, so that filling a new arena allocates once; bytes
    /// past `byteCount` grow the buffer by an eighth once, then by doubling (see ``ReservedGrowth``).
    mutating func reserveCapacity(byteCount: Int, slotCount: Int) {
        bytes.reserveCapacity(byteCount)
        bytesAreReserved = true
        starts.reserveCapacity(slotCount)
        byteCounts.reserveCapacity(slotCount)
    }

    /// Drops the growth slack of the buffer and the offset arrays (each reallocated at its count when it has more
    /// than an eighth spare): a chunk decoded from a checkpoint appends every value, so its arrays end with up to
    /// twice the capacity they use, and a decoded chunk is not written again until a commit changes it.
    mutating func shrinkToFit() {
        ByteArena.shrinkToFit(&bytes)
        ByteArena.shrinkToFit(&starts)
        ByteArena.shrinkToFit(&byteCounts)
    }

    /// The bytes its arrays hold on the heap (their capacities).
    var heapByteCount: Int {
        bytes.capacity &+ starts.capacity &* 4 &+ byteCounts.capacity &* 4
    }

    /// Reallocates an array at its count when more than an eighth of its capacity is spare.
    static func shrinkToFit<Element>(_ array: inout [Element]) {
        let count = array.count
        guard array.capacity - count > count / 8 else { return }
        array = array.withUnsafeBufferPointer { elements in
            [Element](uninitializedCount: count) { fresh, initialized in
                _ = fresh.initialize(fromContentsOf: elements)
                initialized = count
            }
        }
    }

    /// Stores the bytes of a slot.
    ///
    /// - Parameter isASCII: whether every byte of `value` is below 0x80, when the caller knows (see
    ///   ``isASCII(_:)``); `nil` checks.
    mutating func set(_ value: UnsafeRawBufferPointer, at slot: Int, isASCII valueIsASCII: Bool? = nil) {
        // A slot past the last one stored reads as empty (see ``withBytes(of:at:_:)``): an empty value there stores
        // nothing, so that a property left empty (a post's image URLs in the demo store: 16 MB of offsets for 1M
        // posts) keeps no offsets until a value is set after it.
        if value.isEmpty && slot >= starts.count { return }
        if slot == starts.count {
            // The usual case: the slot after the last one, which held nothing. Its offsets are appended as they are,
            // not as zeros then overwritten (a second uniqueness check of each array per value of a replay).
            compactIfMostlyGarbage(excluding: slot)
            requireRoom(for: value.count)
            starts.append(UInt32(bytes.count))
            byteCounts.append(UInt32(value.count))
        } else {
            if slot > starts.count {
                starts.append(contentsOf: repeatElement(0, count: slot + 1 - starts.count))
                byteCounts.append(contentsOf: repeatElement(0, count: slot + 1 - byteCounts.count))
            }
            garbageByteCount += Int(byteCounts[slot])
            compactIfMostlyGarbage(excluding: slot)
            requireRoom(for: value.count)
            starts[slot] = UInt32(bytes.count)
            byteCounts[slot] = UInt32(value.count)
        }
        bytes.growPastReservation(adding: value.count, isReserved: &bytesAreReserved)
        bytes.append(contentsOf: value)
        if isASCII && !(valueIsASCII ?? Self.isASCII(value)) { isASCII = false }
    }

    /// Compacts the buffer (see ``compact(excluding:)``) when more than half of it, and more than 4 KiB, is garbage.
    @inline(__always)
    private mutating func compactIfMostlyGarbage(excluding slot: Int) {
        if garbageByteCount > 4096 && garbageByteCount > bytes.count / 2 { compact(excluding: slot) }
    }

    /// Stops the process when `byteCount` more bytes would make the buffer's offsets overflow.
    @inline(__always)
    private func requireRoom(for byteCount: Int) {
        precondition(bytes.count + byteCount <= Self.maxByteCount, "a chunk's byte arena exceeds 4 GiB")
    }

    /// Forgets the bytes of a slot (its value moved to another storage or the slot was emptied).
    mutating func clear(at slot: Int) {
        guard slot < starts.count else { return }
        garbageByteCount += Int(byteCounts[slot])
        byteCounts[slot] = 0
    }

    /// Rewrites the buffer with the live bytes only, in slot order.
    private mutating func compact(excluding excluded: Int) {
        var fresh: [UInt8] = []
        fresh.reserveCapacity(bytes.count - garbageByteCount)
        for slot in starts.indices {
            if slot == excluded { byteCounts[slot] = 0 }
            let start = Int(starts[slot])
            let count = Int(byteCounts[slot])
            starts[slot] = UInt32(fresh.count)
            fresh.append(contentsOf: bytes[start..<start + count])
        }
        bytes = fresh
        garbageByteCount = 0
        isASCII = fresh.allSatisfy { $0 < 0x80 }
    }
}
