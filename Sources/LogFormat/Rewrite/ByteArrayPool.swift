/// Byte arrays handed back once their bytes are written, for the next checkpoint chunk's payload or compressed
/// body: a compaction encodes and compresses hundreds of chunks of a few MB each, and with arrays made afresh for
/// every chunk the allocator returned their memory to the kernel and took it back (zeroed pages, a fault per 4 KiB)
/// chunk after chunk, as its thresholds and the order of frees happened to decide — up to a fifth of a
/// compaction's CPU in h104's profile. The pool keeps at most ``limit`` arrays, for as long as it lives (one
/// rewrite's checkpoint).
///
/// An array handed back may still be shared (a raw body is its payload): taking it then gives an array of its
/// capacity made afresh, never bytes another owner sees change.
package final class ByteArrayPool: Sendable {
    private let arrays = LockedValue<[[UInt8]]>([])
    /// The most arrays kept; more handed back are let go.
    package let limit: Int

    /// An empty pool that keeps up to `limit` arrays.
    package init(limit: Int) {
        precondition(limit >= 0, "a pool keeps no fewer than no arrays")
        self.limit = limit
    }

    /// How many arrays the pool holds now.
    package var count: Int { arrays.withLock { $0.count } }

    /// An empty array with room for at least `minimumCapacity` bytes: the one handed back last, when it has that
    /// room; else a new one with an eighth more (so that the next chunks, alike but a little larger, fit it too).
    package func take(minimumCapacity: Int) -> [UInt8] {
        var array = takeAny()
        array.removeAll(keepingCapacity: true)
        if array.capacity < minimumCapacity {
            array = []
            array.reserveCapacity(minimumCapacity + minimumCapacity / 8)
        }
        return array
    }

    /// The array handed back last as it was (its bytes are garbage to the taker), or an empty one.
    package func takeAny() -> [UInt8] {
        arrays.withLock { $0.popLast() } ?? []
    }

    /// Arrays smaller than this are not kept: the allocator serves them from memory it keeps anyway, and a small
    /// array taken for a large chunk would only be grown (copied) again.
    package static let smallestKeptCapacity = 64 << 10

    /// Keeps `array` for a later ``take(minimumCapacity:)`` unless the pool is full (then it is let go of on return,
    /// outside the lock) or it is smaller than ``smallestKeptCapacity``.
    package func recycle(_ array: [UInt8]) {
        guard array.capacity >= Self.smallestKeptCapacity else { return }
        arrays.withLock { if $0.count < limit { $0.append(array) } }
    }
}
