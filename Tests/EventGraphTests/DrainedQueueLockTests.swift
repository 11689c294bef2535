import Dispatch
import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A close or compaction waits under the commit lock until no save is queued (a queued save is in the log but not
/// yet in the committed state). It must sleep until the last queued save is installed or dropped, not poll.
@Suite("Waiting for queued saves to drain (commit lock)")
struct DrainedQueueLockTests {
    /// Counts waits on the commit lock's condition rather than the waiter thread's context switches, which wake-ups
    /// of a loaded machine (or the thread sanitizer's own locks) add to: a sleeping waiter begins one wait, and one
    /// more per wake-up, whatever the load; a polling one begins none.
    @Test("a waiter sleeps while a save is queued and runs once it is installed", arguments: ["install", "drop"])
    func waiterSleepsUntilTheQueueDrains(ending: String) throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let store = container.store
        let transactionID = store.lastTransactionID + 1
        // Stands for a save between its enqueue and its install: the test ends it, as the save's own thread would.
        let waitsBefore = store.commitLock.withLock { $0.waitsBegun }
        store.withCommitLock { queue in
            queue.queued.append(
                CommitQueue.Entry(
                    transactionID: transactionID, commitTimeMicroseconds: 0, nextKey: 0, staged: StagedChanges(),
                    blobHandles: [], uniqueKeys: [],
                    changeset: Changeset(
                        transactionID: transactionID, commitTimeMicroseconds: 0, author: "test", nextKey: 0,
                        operations: [])))
        }
        let outcome = LockedValue<(ran: Bool, sawEmptyQueue: Bool)?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let waiter = Thread {
            let sawEmpty = (try? store.withDrainedQueue { queue in queue.queued.isEmpty }) ?? false
            outcome.withLock { $0 = (true, sawEmpty) }
            finished.signal()
        }
        waiter.start()
        // Until the waiter sleeps on the condition (a polling waiter never does; the bound only keeps a wrong
        // implementation from hanging the run).
        let deadline = DispatchTime.now() + .seconds(60)
        var slept = false
        while !slept && DispatchTime.now() < deadline {
            slept = store.commitLock.withLock { $0.waitsBegun } > waitsBefore
            if !slept { usleep(1_000) }
        }
        #expect(slept, "the waiter never slept on the commit lock's condition")
        // Long enough for a polling waiter to come back many times; a sleeping one stays asleep.
        #expect(finished.wait(timeout: .now() + .milliseconds(50)) == .timedOut, "the waiter waits for the save")
        store.withCommitLock { queue in
            if ending == "install" {
                _ = queue.dequeue(through: transactionID)
            } else {
                queue.queued.removeAll { $0.transactionID >= transactionID }
            }
        }
        finished.wait()
        let result = try #require(outcome.withLock { $0 })
        #expect(result.ran && result.sawEmptyQueue)
        let waits = store.commitLock.withLock { $0.waitsBegun } - waitsBefore
        // One wait, woken by the broadcast; a spurious wake-up would add one (POSIX allows them; glibc makes them rare).
        #expect(waits >= 1 && waits <= 3, "the waiter began \(waits) waits instead of sleeping until signalled")
        try container.close()
    }
}
