import Foundation
import Testing

@testable import LogFormat

@Suite("Closing while others append")
struct CloseRaceTests {
    @Test("appends racing close() either land before the seal or fail with .closed; the log ends with the seal")
    func appendsRacingClose() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("race.eglog")
        let writer = try LogWriter(path: path, options: .init(durability: .normal))
        let nextID = LockedValue<UInt64>(0)
        // The acknowledged appends, and how many appenders have stopped; the test closes the writer once appends
        // are flowing (a condition, not a sleep: enough acknowledged, or every appender stopped early).
        let progress = ConditionLock<(acknowledged: Set<UInt64>, stopped: Int)>(([], 0))
        let appenderCount = 4
        let group = DispatchGroup()
        for _ in 0..<appenderCount {
            group.enter()
            Thread.detachNewThread {
                defer {
                    progress.withLock { $0.value.stopped += 1 }
                    progress.broadcast()
                    group.leave()
                }
                while true {
                    do {
                        let pending = try nextID.withLock { id in
                            id += 1
                            return try writer.enqueueTransaction(id: id, payload: Array("payload \(id)".utf8))
                        }
                        try writer.waitUntilDurable(pending)
                        progress.withLock { _ = $0.value.acknowledged.insert(pending.transactionID) }
                        progress.broadcast()
                    } catch let error as LogFormatError {
                        #expect(error.code == .closed, "\(error)")
                        return
                    } catch {
                        Issue.record("unexpected \(error)")
                        return
                    }
                }
            }
        }
        progress.withLock { locked in
            locked.wait(until: { $0.acknowledged.count >= 16 || $0.stopped == appenderCount })
        }
        try writer.close()
        group.wait()

        var replayed: Set<UInt64> = []
        let report = try LogReader(path: path).scan { record in
            if case .transaction(let transaction) = record { replayed.insert(transaction.transactionID) }
        }
        #expect(report.tail == .clean)
        #expect(report.endsWithSeal, "nothing may follow the seal")
        let acked = progress.withLock { $0.value.acknowledged }
        #expect(!acked.isEmpty)
        #expect(acked.isSubset(of: replayed), "every acknowledged append is in the log")
    }
}
