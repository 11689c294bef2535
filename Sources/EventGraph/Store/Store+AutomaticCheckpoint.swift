import Foundation
import LogFormat
import Synchronization

/// When a store rewrites its log as a checkpoint by itself: after a save, once the transactions committed since
/// the log's last checkpoint reach ``ModelContainer/Configuration/automaticCheckpointTransactionCount`` or the log's
/// bytes after it reach ``ModelContainer/Configuration/automaticCheckpointTailByteCount``, so that no open replays an
/// unbounded tail, whether of many small saves or of a few large ones. The rewrite is a compaction (atomic: a crash
/// or a failure at any step leaves the old log or the new one, complete), run on a thread of its own: the save that
/// triggers it returns once it is durable, and saves go on while it runs (see
/// ``Store/compact(keepingPreviousAt:verifyingByReplay:)``). One runs at a time; a store that closes starts no other
/// and cancels the one running (``Store/close()``): it stops at its next check, removes its temporary file and leaves
/// the log as it was, so that a close never waits out a checkpoint of a large store. The next open then replays a
/// longer tail (up to about twice the threshold), and its first save past the threshold starts the checkpoint again.
final class AutomaticCheckpoint: Sendable {
    /// Transactions after the last checkpoint that trigger the next one; 0: never.
    private let threshold = Atomic<Int>(0)
    /// The log's bytes after the last checkpoint that trigger the next one; 0: never.
    private let byteThreshold = Atomic<UInt64>(0)
    /// The last transaction the log's checkpoint holds (0: the log has none).
    private let checkpointTransactionID = Atomic<UInt64>(0)
    /// Whether one runs, whether the store stopped them, and why the last one failed.
    private let run = ConditionLock(Run())
    /// Told when one starts and how it ended (see ``ModelContainer/observeAutomaticCheckpoints(_:)``).
    private let observer = LockedValue<(@Sendable (AutomaticCheckpointEvent) -> Void)?>(nil)

    private struct Run {
        var isRunning = false
        /// Set when the store closes: none starts again.
        var isStopped = false
        /// Why the last automatic checkpoint failed, if it did (the save that triggered it had committed; it is not
        /// undone).
        var failure: EventGraphError?
    }

    /// Sets the thresholds (`nil` or a count below 1: never by that measure).
    func configure(transactionCount: Int?, tailByteCount: Int?) {
        threshold.store(max(0, transactionCount ?? 0), ordering: .relaxed)
        byteThreshold.store(UInt64(max(0, tailByteCount ?? 0)), ordering: .relaxed)
    }

    /// Whether a threshold of log bytes is set (the save then asks the log for its tail's size).
    var countsTailBytes: Bool { byteThreshold.load(ordering: .relaxed) > 0 }

    /// Records that the log's checkpoint now holds the transactions up to `transactionID` (open, compaction).
    func recordCheckpoint(at transactionID: UInt64) {
        checkpointTransactionID.store(transactionID, ordering: .relaxed)
    }

    /// Why the last automatic checkpoint failed; `nil` when it succeeded or none ran.
    var lastFailure: EventGraphError? { run.withLock { $0.value.failure } }

    /// Sets (or removes) the observer of automatic checkpoints.
    func observe(_ body: (@Sendable (AutomaticCheckpointEvent) -> Void)?) {
        observer.withLock { $0 = body }
    }

    fileprivate func report(_ event: AutomaticCheckpointEvent) {
        observer.withLock { $0 }?(event)
    }

    /// Whether the store is closing (no checkpoint starts any more).
    var isStopped: Bool { run.withLock { $0.value.isStopped } }

    /// Whether a checkpoint is due after `lastTransactionID`, with `tailByteCount` bytes of log after the last
    /// checkpoint (`nil`: not asked, ``countsTailBytes`` being false); claims it when it is (the caller must
    /// ``finish(_:)``).
    fileprivate func claimIfDue(after lastTransactionID: UInt64, tailByteCount: UInt64?) -> Bool {
        let count = threshold.load(ordering: .relaxed)
        let since = lastTransactionID &- min(lastTransactionID, checkpointTransactionID.load(ordering: .relaxed))
        let byteCount = byteThreshold.load(ordering: .relaxed)
        // The bytes alone would start one again at once after a checkpoint whose tail (the saves copied after it)
        // is already past the threshold: at least one transaction since the checkpoint is asked for too.
        let isDueByCount = count > 0 && since >= UInt64(count)
        let isDueByBytes = byteCount > 0 && since > 0 && (tailByteCount ?? 0) >= byteCount
        guard isDueByCount || isDueByBytes else { return false }
        return run.withLock { locked in
            guard !locked.value.isRunning, !locked.value.isStopped else { return false }
            locked.value.isRunning = true
            return true
        }
    }

    fileprivate func finish(_ outcome: EventGraphError?) {
        run.withLock { locked in
            locked.value.failure = outcome
            locked.value.isRunning = false
        }
        run.broadcast()
    }

    /// Returns once no automatic checkpoint is running.
    func waitUntilIdle() {
        run.withLock { locked in locked.wait(until: { !$0.isRunning }) }
    }

    /// Starts no more checkpoints and waits until the running one has finished (the store cancelled it first).
    func stop() {
        run.withLock { locked in
            locked.value.isStopped = true
            locked.wait(until: { !$0.isRunning })
        }
    }
}

extension Store {
    /// Starts a checkpoint on a thread of its own when one is due (see ``AutomaticCheckpoint``); called by a save
    /// after it installed, with no lock held, and returns at once. A failure fails no save: it is kept for
    /// ``ModelContainer/lastAutomaticCheckpointFailure``, and the log stays as it was (the rewrite is atomic).
    func checkpointIfDue() {
        guard !isReadOnly,
            automaticCheckpoint.claimIfDue(
                after: lastTransactionID,
                tailByteCount: automaticCheckpoint.countsTailBytes ? backend.tailByteCount : nil)
        else { return }
        // A thread of its own rather than a shared queue's: it runs for seconds on a large store, and the chunks it
        // builds already use every core through `concurrentPerform`.
        let thread = Thread { [self] in
            automaticCheckpoint.report(.began)
            do throws(EventGraphError) {
                let report = try compact()
                automaticCheckpoint.report(.ended(lastTransactionID: report.lastTransactionID))
                automaticCheckpoint.finish(nil)
            } catch {
                // A checkpoint that the store's close cancelled did not fail: the log is as it was, and the store
                // is closed.
                let isCancelled = closing.isCancelled && error.code == .closed
                automaticCheckpoint.report(isCancelled ? .cancelled : .failed(error))
                automaticCheckpoint.finish(isCancelled ? nil : error)
            }
        }
        thread.name = "EventGraph automatic checkpoint"
        thread.start()
    }
}

extension Store {
    /// Applies a container's configuration of automatic checkpoints; returns the store.
    func configuringAutomaticCheckpoint(_ configuration: ModelContainer.Configuration) -> Store {
        automaticCheckpoint.configure(
            transactionCount: configuration.automaticCheckpointTransactionCount,
            tailByteCount: configuration.automaticCheckpointTailByteCount)
        return self
    }
}

/// What an automatic checkpoint did, as ``ModelContainer/observeAutomaticCheckpoints(_:)`` reports it.
package enum AutomaticCheckpointEvent: Sendable {
    /// One started (on its own thread; saves go on).
    case began
    /// It is in place: the log's checkpoint holds the transactions up to `lastTransactionID`.
    case ended(lastTransactionID: UInt64)
    /// The store's close cancelled it: the log is as it was.
    case cancelled
    /// It failed; the log is as it was (see ``ModelContainer/lastAutomaticCheckpointFailure``).
    case failed(EventGraphError)
}

extension ModelContainer {
    /// Calls `observer` on the checkpoint's thread when an automatic checkpoint of one of the container's stores
    /// begins and when it ends (`KillNine` prints both, to count the kills that land during one); `nil` removes it.
    package func observeAutomaticCheckpoints(_ observer: (@Sendable (AutomaticCheckpointEvent) -> Void)?) {
        for store in stores { store.automaticCheckpoint.observe(observer) }
    }

    /// Returns once no automatic checkpoint of the container's stores is running (tests, benchmarks of the
    /// package; see ``Configuration/automaticCheckpointTransactionCount``).
    package func waitForAutomaticCheckpoints() {
        for store in stores { store.automaticCheckpoint.waitUntilIdle() }
    }
}
