import Foundation
import Testing

@testable import LogFormat

/// Concurrent appenders with `.full` durability: every transaction is durable when acknowledged, IDs reach the
/// file in order, and concurrent appends share `fdatasync` calls.
///
/// Transaction IDs must reach the writer in increasing order, so each appender allocates its ID and enqueues its
/// frames under one lock (``LogWriter/enqueueTransaction(id:payload:blobs:)`` does no I/O), then waits for
/// durability outside it (``LogWriter/waitUntilDurable(_:)``), where concurrent waiters share one sync. This is how
/// the object layer is meant to call it.
@Suite("Group commit")
struct GroupCommitTests {
    static let threadCount = 8
    static let appendsPerThread = 200

    /// State shared by the appender threads.
    final class Appenders: Sendable {
        let writer: LogWriter
        /// The last allocated transaction ID; taken together with the enqueue so that IDs reach the file in order.
        let nextID = LockedValue<UInt64>(0)
        let payloads = LockedValue<[UInt64: [UInt8]]>([:])
        let failures = LockedValue<[String]>([])

        init(writer: LogWriter) { self.writer = writer }

        func run(thread: Int, count: Int) {
            for index in 0..<count {
                let payload = Array("thread \(thread) append \(index) ".utf8) + TestBytes.noise(index % 50)
                do {
                    let pending = try nextID.withLock { id throws(LogFormatError) -> AppendedTransaction in
                        id += 1
                        return try writer.enqueueTransaction(id: id, payload: payload)
                    }
                    payloads.withLock { $0[pending.transactionID] = payload }
                    try writer.waitUntilDurable(pending)
                } catch {
                    failures.withLock { $0.append("thread \(thread) append \(index): \(error)") }
                    return
                }
            }
        }
    }

    /// Runs `body` on `count` threads at once and waits for all of them.
    private func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for thread in 0..<count {
            group.enter()
            Thread {
                body(thread)
                group.leave()
            }.start()
        }
        group.wait()
    }

    @Test("8 threads × 200 appends: all replay in order, with fewer syncs than appends")
    func concurrentAppends() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store.eglog")
        let faults = FaultInjector()
        var options = LogWriter.Options(durability: .full)
        options.faultInjector = faults
        let appenders = Appenders(writer: try LogWriter(path: path, options: options))
        let syncsBefore = faults.callCount(.sync)
        let started = ContinuousClock.now

        onThreads(Self.threadCount) { thread in appenders.run(thread: thread, count: Self.appendsPerThread) }

        let elapsed = ContinuousClock.now - started
        let total = Self.threadCount * Self.appendsPerThread
        let syncs = faults.callCount(.sync) - syncsBefore
        print("group commit: \(total) appends from \(Self.threadCount) threads, \(syncs) fdatasync calls, \(elapsed)")
        #expect(appenders.failures.withLock { $0 } == [])
        #expect(syncs < total, "concurrent appends share syncs")
        #expect(syncs > 0)
        #expect(appenders.writer.lastTransactionID == UInt64(total))
        try appenders.writer.close()

        let replay = try Replay.read(path)
        let payloads = appenders.payloads.withLock { $0 }
        #expect(replay.report.tail == .clean)
        #expect(replay.transactions.map(\.id) == Array(1...UInt64(total)))
        #expect(replay.transactions.allSatisfy { payloads[$0.id] == $0.payload })
    }

    @Test("one appender at a time makes one sync per append")
    func sequentialAppends() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        var options = LogWriter.Options(durability: .full)
        options.faultInjector = faults
        let writer = try LogWriter(path: directory.file("store.eglog"), options: options)
        let syncsBefore = faults.callCount(.sync)
        for id in 1...20 as ClosedRange<UInt64> { try writer.appendTransaction(id: id, payload: [UInt8(id)]) }
        #expect(faults.callCount(.sync) - syncsBefore == 20)
    }

    @Test("a transaction ID that does not increase is refused without poisoning the writer")
    func nonIncreasingID() throws {
        let directory = TemporaryDirectory()
        let writer = try LogWriter(path: directory.file("store.eglog"))
        try writer.appendTransaction(id: 5, payload: [5])
        for id in [5, 4] as [UInt64] {
            let error = #expect(throws: LogFormatError.self) { try writer.appendTransaction(id: id, payload: [0]) }
            #expect(error?.code == .invalidArgument)
        }
        try writer.appendTransaction(id: 6, payload: [6])
        #expect(writer.lastTransactionID == 6)
    }

    @Test("a sync failure during a group commit fails every transaction in the group and poisons the writer")
    func failedGroupSync() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store.eglog")
        let faults = FaultInjector()
        var options = LogWriter.Options(durability: .full)
        options.faultInjector = faults
        let writer = try LogWriter(path: path, options: options)
        try writer.appendTransaction(id: 1, payload: [1])
        // Three transactions queued together, then one sync for all of them fails.
        let pending = try (2...4 as ClosedRange<UInt64>).map { id in
            try writer.enqueueTransaction(id: id, payload: [UInt8(id)])
        }
        faults.arm(.sync, fault: .fail(errno: EIO))
        for transaction in pending {
            let error = #expect(throws: LogFormatError.self) { try writer.waitUntilDurable(transaction) }
            #expect(error?.code == .io || error?.code == .poisoned)
        }
        #expect(faults.firedFaults == [.sync])
    }
}
