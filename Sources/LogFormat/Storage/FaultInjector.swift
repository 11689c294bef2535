/// Injects failures into LogFormat's file operations, for tests of crash and error handling.
///
/// Like TigerBeetle's storage simulator: a test arms a fault ("fail the 3rd sync", "tear the next write in half")
/// and passes the injector in the writer's options; every file operation asks it first. Production code passes none.
package final class FaultInjector: Sendable {
    /// A file operation that can be made to fail.
    package enum Operation: Hashable, Sendable, CaseIterable {
        case write, sync, truncate, rename, directorySync
    }

    /// What happens when an armed fault fires.
    package enum Fault: Hashable, Sendable {
        /// The operation fails with this `errno` and has no effect.
        case fail(errno: Int32)
        /// (Writes only) the first half of the bytes reach the file, then the write fails with this `errno`.
        case tear(errno: Int32)
        /// (Writes only) the bytes reach the file with one bit of the middle byte flipped, and the write reports
        /// success: a silent corruption, which only a re-read of the checksums finds.
        case flipBit
    }

    private struct Armed {
        var remaining: Int
        var fault: Fault
    }

    /// A point between the steps of a rewrite (``LogWriter/prepareRewrite(from:schema:begin:end:writeCheckpoint:verify:)``
    /// and ``LogWriter/finishRewrite(_:keepingPreviousAt:)``), where a test may hold the rewrite (to save beside it)
    /// or make it fail (as a crash there would stop it).
    package enum RewriteStage: Hashable, Sendable, CaseIterable {
        /// The anchor is taken (the store still holds its queue drained); nothing is written yet.
        case anchored
        /// The new file holds the checkpoint, synced and verified; the log still takes appends (the transactions
        /// appended since the anchor are copied next, still without the lock).
        case checkpointWritten
        /// The tail copy has begun (the writer's lock is held; one transaction copied when any was committed).
        case copyingTail
        /// The tail and the seal are written and synced, the new file verified; the rename comes next.
        case tailCopied
        /// The new file was renamed over the log; the directory sync comes next.
        case renamed
    }

    private struct State {
        var armed: [Operation: Armed] = [:]
        var counts: [Operation: Int] = [:]
        var fired: [Operation] = []
        var failingReads: FailingReads?
        var failedReadCount = 0
        var writebacks: [Range<UInt64>] = []
    }

    /// Reads made to fail (``failReads(_:errno:at:)``).
    private struct FailingReads {
        var remaining: Int
        var errno: Int32
        var byteOffsets: Range<UInt64>?
    }

    private let state = LockedValue(State())
    private let stageHook = LockedValue<(@Sendable (RewriteStage) throws(LogFormatError) -> Void)?>(nil)
    private let readHook = LockedValue<(@Sendable (_ path: String, _ byteOffset: UInt64) -> Void)?>(nil)

    /// Calls `hook` before every read of a file opened with this injector, with the file's path and the read's
    /// byte offset (on the reading thread): a test changes the file there to play a writer that writes while a
    /// scan reads (`PreallocationRaceTests`).
    package func onRead(_ hook: (@Sendable (_ path: String, _ byteOffset: UInt64) -> Void)?) {
        readHook.withLock { $0 = hook }
    }

    /// Called by the file layer before each read.
    func willRead(path: String, at byteOffset: UInt64) {
        guard let hook = readHook.withLock({ $0 }) else { return }
        hook(path, byteOffset)
    }

    /// Makes the next `count` reads of a file opened with this injector fail with `errno` (`EIO` by default, as a
    /// disk that cannot read a sector), each with no effect; with `byteOffsets`, only reads that start in that
    /// range fail (and count). The reads of a checkpoint chunk after its decoded form was evicted are what tests
    /// make fail this way (`ChunkReadFailureTests`).
    package func failReads(_ count: Int, errno: Int32 = 5, at byteOffsets: Range<UInt64>? = nil) {
        precondition(count >= 0, "a count of reads to fail is at least 0 (\(count))")
        state.withLock {
            $0.failingReads = count == 0 ? nil : FailingReads(remaining: count, errno: errno, byteOffsets: byteOffsets)
        }
    }

    /// How many reads the injector has made fail (``failReads(_:errno:at:)``).
    package var failedReadCount: Int { state.withLock { $0.failedReadCount } }

    /// Called by the file layer before each read, after ``willRead(path:at:)``: the `errno` to fail it with, if an
    /// armed read failure fires now.
    func readFailure(at byteOffset: UInt64) -> Int32? {
        state.withLock { state in
            guard var failing = state.failingReads else { return nil }
            if let range = failing.byteOffsets, !range.contains(byteOffset) { return nil }
            failing.remaining -= 1
            state.failingReads = failing.remaining > 0 ? failing : nil
            state.failedReadCount += 1
            return failing.errno
        }
    }

    /// Calls `hook` at every ``RewriteStage`` a rewrite reaches (on the rewriting thread); an error it throws fails
    /// the rewrite there.
    package func onRewriteStage(_ hook: (@Sendable (RewriteStage) throws(LogFormatError) -> Void)?) {
        stageHook.withLock { $0 = hook }
    }

    /// Called by the rewrite at each stage.
    func reach(_ stage: RewriteStage) throws(LogFormatError) {
        guard let hook = stageHook.withLock({ $0 }) else { return }
        try hook(stage)
    }

    /// An injector with no fault armed (it still counts calls).
    package init() {}

    /// Makes the `n`th next call (1 = the very next one) of `operation` fail with `fault`.
    package func arm(_ operation: Operation, onCall n: Int = 1, fault: Fault) {
        precondition(n >= 1, "onCall counts from 1")
        state.withLock { $0.armed[operation] = Armed(remaining: n, fault: fault) }
    }

    /// The byte ranges whose writeback was started early (``LogFile/startWriteback(at:count:)``), in order, of
    /// every file opened with this injector.
    package var startedWritebacks: [Range<UInt64>] { state.withLock { $0.writebacks } }

    /// Called by the file layer when it starts a range's writeback.
    func recordWriteback(_ range: Range<UInt64>) {
        state.withLock { $0.writebacks.append(range) }
    }

    /// How many times each operation has been attempted.
    package func callCount(_ operation: Operation) -> Int { state.withLock { $0.counts[operation, default: 0] } }

    /// The faults that have fired, in order.
    package var firedFaults: [Operation] { state.withLock { $0.fired } }

    /// Called by the file layer before each operation; returns the fault to apply, if one fires now.
    func check(_ operation: Operation) -> Fault? {
        state.withLock { state in
            state.counts[operation, default: 0] += 1
            guard var armed = state.armed[operation] else { return nil }
            armed.remaining -= 1
            if armed.remaining > 0 {
                state.armed[operation] = armed
                return nil
            }
            state.armed[operation] = nil
            state.fired.append(operation)
            return armed.fault
        }
    }
}
