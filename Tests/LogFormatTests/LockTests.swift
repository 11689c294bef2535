import Foundation
import Testing

@testable import LogFormat

/// One writer per store, across threads and processes; readers alongside.
@Suite("Writer lock")
struct LockTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("store.eglog") }

    @Test("a second writer in the same process gets .locked; after close the store can be reopened")
    func secondWriterInProcess() throws {
        let first = try LogWriter(path: path)
        try first.appendTransaction(id: 1, payload: [1])
        let error = #expect(throws: LogFormatError.self) { _ = try LogWriter(path: path) }
        #expect(error?.code == .locked)
        #expect(error?.message.contains("pid \(getpid())") == true, "message: \(error?.message ?? "")")
        try first.close()
        let second = try LogWriter(path: path)
        #expect(second.lastTransactionID == 1)
    }

    @Test("a child process holding the lock makes the writer fail with .locked naming its pid")
    func childProcessHoldsLock() throws {
        try TestLog.make(at: path, transactionCount: 2)
        // The lock is an exclusive flock on the log file itself; the child takes it the way any tool can.
        let holder = try ForeignLockHolder(path: path)
        let before = try LogFileSurgery.bytes(of: path)
        let error = #expect(throws: LogFormatError.self) { _ = try LogWriter(path: path) }
        #expect(error?.code == .locked)
        #expect(
            error?.message.contains("in use by another process (pid \(holder.pid))") == true,
            "message: \(error?.message ?? "")")
        #expect(error?.path == path)
        #expect(try LogFileSurgery.bytes(of: path) == before)

        // Readers take no lock.
        #expect(try Replay.read(path).transactions == TestLog.expected(1...2))

        holder.stop()
        let writer = try LogWriter(path: path)
        #expect(writer.lastTransactionID == 2)
        #expect(!FileManager.default.fileExists(atPath: path + ".lock"), "no separate lock file is created")
    }

    @Test("a reader reads alongside a writer, seeing committed transactions and never a partial one")
    func readerAlongsideWriter() throws {
        let writer = try LogWriter(path: path)
        for id in 1...5 as ClosedRange<UInt64> {
            try writer.appendTransaction(id: id, payload: TestLog.payload(for: id))
        }
        let reader = try LogReader(path: path)
        #expect(try Replay.read(path).transactions == TestLog.expected(1...5))

        try writer.appendTransaction(id: 6, payload: TestLog.payload(for: 6))
        // A frame the writer has only half written looks like a torn tail to a reader, never like damage.
        let end = writer.byteCount
        try LogFileSurgery.append(path, Array(TestBytes.noise(30)))
        let report = try reader.scan()
        #expect(report.lastTransactionID == 6)
        #expect(report.tail.isTorn)
        #expect(report.tail.byteOffset == end)
        try LogFileSurgery.truncate(path, to: end)

        try writer.close()
        #expect(try reader.scan().endsWithSeal)
    }
}
