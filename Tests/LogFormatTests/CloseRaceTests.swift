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
        let nextID = PthreadLocked<UInt64>(0)
        let acknowledged = PthreadLocked<Set<UInt64>>([])
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                while true {
                    do {
                        let pending = try nextID.withLock { id in
                            id += 1
                            return try writer.enqueueTransaction(id: id, payload: Array("payload \(id)".utf8))
                        }
                        try writer.waitUntilDurable(pending)
                        _ = acknowledged.withLock { $0.insert(pending.transactionID) }
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
        Thread.sleep(forTimeInterval: 0.05)
        try writer.close()
        group.wait()

        var replayed: Set<UInt64> = []
        let report = try LogReader(path: path).scan { record in
            if case .transaction(let transaction) = record { replayed.insert(transaction.transactionID) }
        }
        #expect(report.tail == .clean)
        #expect(report.endsWithSeal, "nothing may follow the seal")
        let acked = acknowledged.withLock { $0 }
        #expect(!acked.isEmpty)
        #expect(acked.isSubset(of: replayed), "every acknowledged append is in the log")
    }
}
