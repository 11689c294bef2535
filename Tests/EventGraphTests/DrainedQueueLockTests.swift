import Dispatch
import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A close or compaction waits under the commit lock until no save is queued (a queued save is in the log but not
/// yet in the committed state). It must sleep until the last queued save is installed or dropped, not poll.
@Suite("Waiting for queued saves to drain (commit lock)")
struct DrainedQueueLockTests {
    /// The calling thread's voluntary context switches so far: each sleep of a polling loop is one.
    private static func voluntarySwitches() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/thread-self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") }),
            let count = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces))
        else { return 0 }
        return count
    }

    @Test("a waiter sleeps while a save is queued and runs once it is installed", arguments: ["install", "drop"])
    func waiterSleepsUntilTheQueueDrains(ending: String) throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let store = container.store
        let transactionID = store.lastTransactionID + 1
        // Stands for a save between its enqueue and its install: the test ends it, as the save's own thread would.
        store.withCommitLock { queue in
            queue.queued.append(
                CommitQueue.Entry(
                    transactionID: transactionID, commitTimeMicroseconds: 0, nextKey: 0, staged: StagedChanges(),
                    blobHandles: [], uniqueKeys: [],
                    changeset: Changeset(
                        transactionID: transactionID, commitTimeMicroseconds: 0, author: "test", nextKey: 0,
                        operations: [])))
        }
        let outcome = LockedValue<(ran: Bool, sawEmptyQueue: Bool, switches: Int)?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let waiter = Thread {
            let before = Self.voluntarySwitches()
            let sawEmpty = (try? store.withDrainedQueue { queue in queue.queued.isEmpty }) ?? false
            let switches = Self.voluntarySwitches() - before
            outcome.withLock { $0 = (true, sawEmpty, switches) }
            finished.signal()
        }
        waiter.start()
        // Long enough for a polling waiter (the old `usleep(100)` loop) to wake hundreds of times; a sleeping one
        // wakes once whatever the time. Not an assertion on time: only the count of wake-ups is checked.
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
        #expect(result.switches <= 8, "the waiter woke \(result.switches) times instead of sleeping until signalled")
        try container.close()
    }
}
