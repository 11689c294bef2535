import Foundation
import Testing

@testable import LogFormat

/// After a failed write or sync (a full disk) the writer is poisoned; closing it must still let go of the store,
/// so that the same process can reopen it while the old writer object is alive (issue 9, item 14).
@Suite("Closing a poisoned writer")
struct PoisonedCloseTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("store.eglog") }

    /// How many of this process's descriptors are open on `path`'s file.
    private func descriptorsOpen(on path: String) throws -> Int {
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        return try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name)) == target
        }
    }

    @Test(
        "close throws the poison, releases the lock and the file, and the store reopens in the same process",
        arguments: [FaultInjector.Operation.write, .sync])
    func closeReleasesAfterFailure(operation: FaultInjector.Operation) throws {
        try TestLog.make(at: path, transactionCount: 3)
        let faults = FaultInjector()
        var options = LogWriter.Options()
        options.faultInjector = faults
        let writer = try LogWriter(path: path, options: options)
        #expect(try descriptorsOpen(on: path) > 0)
        faults.arm(operation, fault: .fail(errno: ENOSPC))
        let failure = #expect(throws: LogFormatError.self) {
            try writer.appendTransaction(id: 4, payload: TestLog.payload(for: 4))
        }
        #expect(failure?.systemErrno == ENOSPC)

        let close = #expect(throws: LogFormatError.self) { try writer.close() }
        #expect(close?.code == .poisoned, "closing says that the last writes failed")
        #expect(try descriptorsOpen(on: path) == 0, "the poisoned writer keeps no descriptor on the log")
        #expect(try anotherProcessCanLock(path), "the poisoned writer keeps no lock")
        try writer.close()  // a second close has nothing left to do

        let reopened = try LogWriter(path: path)
        #expect(reopened.lastTransactionID == 3, "the failed transaction is not in the log")
        try reopened.appendTransaction(id: 4, payload: TestLog.payload(for: 4))
        try reopened.close()
        #expect(try Replay.read(path).transactions == TestLog.expected(1...4))
        withExtendedLifetime(writer) {}
    }

    @Test("a clean close releases the file too")
    func cleanCloseReleasesFile() throws {
        let writer = try LogWriter(path: path)
        try writer.appendTransaction(id: 1, payload: TestLog.payload(for: 1))
        try writer.close()
        #expect(try descriptorsOpen(on: path) == 0)
        withExtendedLifetime(writer) {}
    }
}
