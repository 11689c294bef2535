import LogFormat
import Synchronization

/// Keeps the decoded form of a store's checkpoint chunks under a byte budget, evicting the coldest (a clock).
///
/// A chunk of the checkpoint that no commit has changed can be read and decoded again from the checkpoint file
/// (``LazyColumnChunk``), so its decoded form need not live as long as the objects that read it: they hold the
/// chunk's box (``ChunkSlot``), and a read after an eviction decodes it again, verifying its checksums and counts as
/// on its first load. A chunk a commit changed is not the checkpoint's any more; it lives in the state's versions and
/// is never here.
///
/// Each box counts its decoded bytes in when it decodes (``admit(_:byteCount:)``). When the total passes the budget,
/// the clock's hand sweeps the boxes in the order they were decoded: a box read since the hand last passed gets a
/// second chance (its referenced bit is cleared), the others are evicted until the total fits — always keeping the
/// box just decoded, so a budget smaller than one chunk still reads. Eviction drops the box's reference to its
/// decoded chunk; a reader that took the chunk's columns before keeps reading them until it lets them go.
///
/// Locks: the cache's own `LockedValue` guards the clock and the total, held only to pick victims; a box's lock is never
/// taken under it (victims are evicted after it is let go), and the cache's is never taken under a box's.
final class DecodedChunkCache: Sendable {
    /// The budget when a configuration gives none: 128 MiB of decoded chunks per store (about 240 chunks of 4,096
    /// posts of the example blog app; all of a 100,000-post store).
    static let defaultByteBudget = ModelContainer.Configuration().decodedChunkByteBudget

    /// The most bytes of decoded checkpoint chunks kept; `Int.max` keeps every chunk once decoded.
    let byteBudget: Int
    private let state = LockedValue(State())

    private struct State {
        /// The decoded boxes in the order they were (last) decoded, and the bytes each counted in.
        var entries: [(box: LazyColumnChunk, byteCount: Int)] = []
        /// The clock's hand: the next entry it looks at.
        var hand = 0
        /// The bytes of every entry.
        var byteCount = 0
        /// How many decoded chunks were evicted (for tests and reports).
        var evictionCount = 0
        /// The most bytes one chunk counted in so far: what another chunk is expected to take.
        var largestChunkByteCount = 0
    }

    init(byteBudget: Int = DecodedChunkCache.defaultByteBudget) {
        precondition(byteBudget >= 0, "a budget of decoded chunks is at least 0 bytes (\(byteBudget))")
        self.byteBudget = byteBudget
    }

    /// Whether decoded chunks are kept forever (no budget): boxes then skip the cache altogether.
    var isUnbounded: Bool { byteBudget == Int.max }

    /// The bytes of decoded chunks held now.
    var byteCount: Int { state.withLock { $0.byteCount } }

    /// The number of decoded chunks held now.
    var chunkCount: Int { state.withLock { $0.entries.count } }

    /// How many decoded chunks have been evicted since the store opened.
    var evictionCount: Int { state.withLock { $0.evictionCount } }

    /// Whether another chunk (as large as the largest counted in so far) fits in the budget beside those held
    /// without evicting one; true before any chunk was counted in. A hint: other threads may decode meanwhile.
    var hasRoomForAnotherChunk: Bool {
        guard !isUnbounded else { return true }
        return state.withLock { state in
            state.largestChunkByteCount == 0 || state.byteCount <= byteBudget &- state.largestChunkByteCount
        }
    }

    /// Counts in a box that has just decoded its chunk (`byteCount` bytes), then evicts the coldest others while the
    /// total is over the budget. Called once per decode, after the box's lock is let go.
    func admit(_ box: LazyColumnChunk, byteCount: Int) {
        guard !isUnbounded else { return }
        let victims = state.withLock { state in
            state.entries.append((box, byteCount))
            state.byteCount &+= byteCount
            state.largestChunkByteCount = max(state.largestChunkByteCount, byteCount)
            return Self.victims(in: &state, keeping: box, budget: byteBudget)
        }
        for victim in victims { victim.evict() }
    }

    /// Takes entries off the clock until the total fits the budget or only `kept` is left: a referenced entry is
    /// passed over once (its bit cleared); after two full turns the hand takes what it finds, so readers that keep
    /// setting bits cannot hold it forever.
    private static func victims(in state: inout State, keeping kept: LazyColumnChunk, budget: Int) -> [LazyColumnChunk]
    {
        var victims: [LazyColumnChunk] = []
        var steps = 0
        while state.byteCount > budget, state.entries.count > 1 {
            if state.hand >= state.entries.count { state.hand = 0 }
            let entry = state.entries[state.hand]
            steps += 1
            if entry.box === kept || (steps <= 2 * state.entries.count && entry.box.takeReferencedBit()) {
                state.hand += 1
                continue
            }
            state.entries.remove(at: state.hand)
            state.byteCount &-= entry.byteCount
            state.evictionCount += 1
            victims.append(entry.box)
        }
        return victims
    }
}
