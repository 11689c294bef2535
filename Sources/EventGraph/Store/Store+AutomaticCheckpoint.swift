import Synchronization

/// When a store rewrites its log as a checkpoint by itself: after a save, once the transactions committed since
/// the log's last checkpoint reach ``ModelContainer/Configuration/automaticCheckpointTransactionCount``, so that
/// no open replays an unbounded tail. The rewrite is a compaction (atomic: a crash or a failure at any step leaves
/// the old log or the new one, complete).
final class AutomaticCheckpoint: Sendable {
    /// Transactions after the last checkpoint that trigger the next one; 0: never.
    private let threshold = Atomic<Int>(0)
    /// The last transaction the log's checkpoint holds (0: the log has none).
    private let checkpointTransactionID = Atomic<UInt64>(0)
    /// Whether a save is writing one now (a second save that finds the tail too long leaves it to that one).
    private let isRunning = Atomic<Bool>(false)
    /// Why the last automatic checkpoint failed, if it did (the save that ran it had committed; it is not undone).
    private let failure = Mutex<EventGraphError?>(nil)

    /// Sets the threshold (`nil` or a count below 1: never).
    func configure(transactionCount: Int?) {
        threshold.store(max(0, transactionCount ?? 0), ordering: .relaxed)
    }

    /// Records that the log's checkpoint now holds the transactions up to `transactionID` (open, compaction).
    func recordCheckpoint(at transactionID: UInt64) {
        checkpointTransactionID.store(transactionID, ordering: .relaxed)
    }

    /// Why the last automatic checkpoint failed; `nil` when it succeeded or none ran.
    var lastFailure: EventGraphError? { failure.withLock { $0 } }

    /// Whether a checkpoint is due after `lastTransactionID`; claims it when it is (the caller must ``finish``).
    fileprivate func claimIfDue(after lastTransactionID: UInt64) -> Bool {
        let count = threshold.load(ordering: .relaxed)
        let since = lastTransactionID &- min(lastTransactionID, checkpointTransactionID.load(ordering: .relaxed))
        guard count > 0, since >= UInt64(count) else { return false }
        return isRunning.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
    }

    fileprivate func finish(_ outcome: EventGraphError?) {
        failure.withLock { $0 = outcome }
        isRunning.store(false, ordering: .releasing)
    }
}

extension Store {
    /// Writes a checkpoint when one is due (see ``AutomaticCheckpoint``); called by a save after it installed, with
    /// no lock held. A failure does not fail the save, which had committed: it is kept for
    /// ``ModelContainer/lastAutomaticCheckpointFailure``, and the log stays as it was (the rewrite is atomic).
    func checkpointIfDue() {
        guard !isReadOnly, automaticCheckpoint.claimIfDue(after: lastTransactionID) else { return }
        do throws(EventGraphError) {
            _ = try compact()
            automaticCheckpoint.finish(nil)
        } catch {
            automaticCheckpoint.finish(error)
        }
    }
}

extension Store {
    /// Applies a container's configuration of automatic checkpoints; returns the store.
    func configuringAutomaticCheckpoint(_ configuration: ModelContainer.Configuration) -> Store {
        automaticCheckpoint.configure(transactionCount: configuration.automaticCheckpointTransactionCount)
        return self
    }
}
