import Foundation
import LogFormat
import Synchronization

/// One entity's digest made on two threads: the calling thread hashes the entity's objects in batches, in key order
/// (the FNV chain is serial), while a helper thread of its own makes the words of batches a few ahead into word lists
/// (``DigestWordList``), so that the caller, reaching such a batch, only hashes its words.
///
/// The caller never waits for the helper: a batch whose words are not made when the caller reaches it (the helper is
/// behind, still on it, or had no room) is made by the caller itself, straight into its hasher, and the helper's
/// words for it, if any, are dropped. Its digest is therefore the serial one whatever the helper does, and never
/// slower than the serial one by more than a lock and a broadcast per batch; with a core to spare, the caller makes
/// about half the batches itself and hashes the helper's words for the rest (making an object's words costs about
/// three times hashing them: BENCHMARKS.md, h112).
///
/// The helper takes batches ``Parameters/lead`` or more after the caller's, at most
/// ``Parameters/maximumHeldCount`` made lists wait to be hashed, and their memory (fixed buffers of
/// ``Parameters/wordCapacity`` words) is used again once hashed. ``combine(into:stoppingWhen:)`` stops the helper and
/// waits for it to end on every way out, so no helper outlives the digest.
final class DigestBatches: @unchecked Sendable {
    // @unchecked Sendable: `buffers` (a pointer) is written only by the helper, in a buffer it took from the board
    // under the lock and has not handed back yet, and read only by the caller, in a buffer it took from the board
    // after the helper handed it in; the board (a `ConditionLock`) orders the two. Everything else is a `let` of
    // Sendable values, the lock or an atomic.

    /// How batches are sized and how far the helper runs ahead.
    struct Parameters: Sendable {
        /// The least number of live objects for which a helper is started (fewer are hashed serially).
        var leastObjectCount = 4_096
        /// The most objects in a batch (a batch is otherwise a sixteenth of the entity).
        var largestBatch = 512
        /// How many batches after the caller's the helper starts a batch.
        var lead = 4
        /// The most made lists waiting to be hashed.
        var maximumHeldCount = 8
        /// The words a list holds; a batch with more is made by the caller.
        var wordCapacity = 1 << 17
        /// Whether a helper may start at all (more than one core).
        var helperAllowed = OrderedPipeline.workerCount > 1
        /// Called by the helper before it makes each batch (tests slow it down with it).
        var beforeHelperBatch: (@Sendable (Int) -> Void)?
    }

    /// What happened to the batches, for tests and diagnostics.
    struct Statistics: Sendable, Equatable {
        /// Batches whose words the caller hashed from the helper's lists.
        var hashedFromHelper = 0
        /// Batches the caller made itself.
        var madeByCaller = 0
        /// Lists the helper made that were dropped (the caller had reached their batch, or the list overflowed).
        var dropped = 0
    }

    private struct Board: Sendable {
        /// The batch the caller is at: it has taken or made every batch below.
        var callerBatch = 0
        /// The least batch the helper may take next.
        var helperNext = 0
        /// Made lists waiting to be hashed: their buffer and word count.
        var made: [Int: (buffer: Int, count: Int)] = [:]
        var freeBuffers: [Int]
        var finished = false
        var helperRunning = true
        var statistics = Statistics()
    }

    let parameters: Parameters
    let batchSize: Int
    let batchCount: Int
    private let words: EntityDigestWords
    private let buffers: UnsafeMutablePointer<UInt64>
    private let bufferCount: Int
    private let board: ConditionLock<Board>
    private let stopping = Atomic<Bool>(false)

    /// Starts a helper for `words`' entity, or `nil` when it is not worth one (too few objects, one core).
    init?(_ words: EntityDigestWords, parameters: Parameters = Parameters()) {
        guard parameters.helperAllowed, words.objectCount >= max(parameters.leastObjectCount, 1) else { return nil }
        self.parameters = parameters
        self.words = words
        batchSize = max(1, min(parameters.largestBatch, words.objectCount / 16))
        batchCount = (words.objectCount + batchSize - 1) / batchSize
        // The held lists, the one the helper fills and the one the caller hashes.
        bufferCount = max(parameters.maximumHeldCount, 1) + 2
        buffers = .allocate(capacity: bufferCount * parameters.wordCapacity)
        board = ConditionLock(Board(freeBuffers: Array(0..<bufferCount)))
        let thread = Thread { [self] in runHelper() }
        thread.name = "EventGraph digest helper"
        thread.start()
    }

    deinit { buffers.deallocate() }

    /// What happened to the batches so far.
    var statistics: Statistics { board.withLock { $0.value.statistics } }

    /// Whether the helper thread has ended.
    var helperHasEnded: Bool { board.withLock { !$0.value.helperRunning } }

    /// Adds the entity's objects to `hasher` in key order, as `EntityDigestWords.combine(objects:into:stoppingWhen:)`
    /// of all of them does; stops (the hasher's state then meaningless) once `isCancelled` returns `true`. Returns
    /// after the helper has ended.
    func combine(into hasher: inout DigestHasher, stoppingWhen isCancelled: () -> Bool) {
        defer { finish() }
        var hashed: Int?
        for batch in 0..<batchCount {
            if isCancelled() { return }
            let taken = board.withLock { locked in
                if let hashed { locked.value.freeBuffers.append(hashed) }
                locked.value.callerBatch = batch
                let taken = locked.value.made.removeValue(forKey: batch)
                if taken != nil {
                    locked.value.statistics.hashedFromHelper += 1
                } else {
                    locked.value.statistics.madeByCaller += 1
                }
                return taken
            }
            // Room for the helper, or a caller past the batch it waits to take.
            board.broadcast()
            hashed = nil
            if let taken {
                hasher.combine(words: UnsafeBufferPointer(start: buffer(taken.buffer), count: taken.count))
                hashed = taken.buffer
            } else if !words.combine(objects: objects(ofBatch: batch), into: &hasher, stoppingWhen: isCancelled) {
                return
            }
        }
    }

    /// The objects (indices in key order) of a batch.
    func objects(ofBatch batch: Int) -> Range<Int> {
        batch * batchSize..<min((batch + 1) * batchSize, words.objectCount)
    }

    private func buffer(_ index: Int) -> UnsafeMutablePointer<UInt64> { buffers + index * parameters.wordCapacity }

    /// Stops the helper and waits until it has ended.
    private func finish() {
        stopping.store(true, ordering: .relaxed)
        board.withLock { locked in
            locked.value.finished = true
            locked.value.made.removeAll()
        }
        board.broadcast()
        board.withLock { locked in locked.wait { !$0.helperRunning } }
    }

    private func runHelper() {
        while let next = nextHelperBatch() {
            let (batch, bufferIndex) = next
            parameters.beforeHelperBatch?(batch)
            var list = DigestWordList(base: buffer(bufferIndex), capacity: parameters.wordCapacity)
            let complete = words.combine(objects: objects(ofBatch: batch), into: &list) {
                stopping.load(ordering: .relaxed)
            }
            let count = list.count
            board.withLock { locked in
                if complete, count <= parameters.wordCapacity, !locked.value.finished,
                    batch > locked.value.callerBatch
                {
                    locked.value.made[batch] = (bufferIndex, count)
                } else {
                    locked.value.freeBuffers.append(bufferIndex)
                    locked.value.statistics.dropped += 1
                }
            }
        }
        board.withLock { $0.value.helperRunning = false }
        board.broadcast()
    }

    /// The batch the helper makes next and the buffer it makes it in, after waiting for room; `nil` when it is done.
    private func nextHelperBatch() -> (batch: Int, buffer: Int)? {
        board.withLock { locked -> (batch: Int, buffer: Int)? in
            locked.wait { board in
                board.finished
                    || (board.made.count < parameters.maximumHeldCount && !board.freeBuffers.isEmpty)
            }
            guard !locked.value.finished else { return nil }
            let batch = max(locked.value.helperNext, locked.value.callerBatch + parameters.lead)
            guard batch < batchCount else { return nil }
            locked.value.helperNext = batch + 1
            return (batch, locked.value.freeBuffers.removeLast())
        }
    }
}
