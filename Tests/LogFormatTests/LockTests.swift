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
        let lockPath = StoreLock.lockPath(for: path)
        // The shell takes the flock on fd 9, writes its pid, then becomes `sleep` (same pid, fd 9 inherited).
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sh")
        child.arguments = ["-c", "exec 9>>\"$1\" && flock -x 9 && echo $$ > \"$1\" && exec sleep 30", "sh", lockPath]
        try child.run()
        defer {
            if child.isRunning {
                child.terminate()
                child.waitUntilExit()
            }
        }
        let pid = child.processIdentifier
        try waitUntil("the child takes the lock") {
            (try? String(contentsOfFile: lockPath, encoding: .utf8))?.hasPrefix("\(pid)\n") == true
        }

        let before = try LogFileSurgery.bytes(of: path)
        let error = #expect(throws: LogFormatError.self) { _ = try LogWriter(path: path) }
        #expect(error?.code == .locked)
        #expect(
            error?.message.contains("in use by another process (pid \(pid))") == true,
            "message: \(error?.message ?? "")")
        #expect(error?.path == path)
        #expect(try LogFileSurgery.bytes(of: path) == before)

        // Readers take no lock.
        #expect(try Replay.read(path).transactions == TestLog.expected(1...2))

        child.terminate()
        child.waitUntilExit()
        let writer = try LogWriter(path: path)
        #expect(writer.lastTransactionID == 2)
        #expect(try String(contentsOfFile: lockPath, encoding: .utf8) == "\(getpid())\n")
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

    private func waitUntil(_ what: String, timeoutSeconds: Double = 10, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while !condition() {
            guard Date() < deadline else { throw LockTestError.timeout(what) }
            usleep(10_000)
        }
    }

    enum LockTestError: Error { case timeout(String) }
}
