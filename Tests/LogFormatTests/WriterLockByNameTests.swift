import Foundation
import Testing

@testable import LogFormat

/// The writer lock guards the log file itself, whatever name reaches it: a symlink, a hard link or a bind mount
/// of a log must not give a second writer a lock of its own (issue 9, item 2).
@Suite("Writer lock by any name")
struct WriterLockByNameTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("store.eglog") }

    @Test("a second writer in the same process through another name is refused", arguments: SecondName.allCases)
    func secondWriterInProcess(name: SecondName) throws {
        try TestLog.make(at: path, transactionCount: 2)
        let alias = try name.make(for: path, in: directory)
        let first = try LogWriter(path: path)
        let error = #expect(throws: LogFormatError.self) { _ = try LogWriter(path: alias) }
        #expect(error?.code == .locked)
        #expect(
            error?.message.contains("already open for writing in this process (pid \(getpid()))") == true,
            "message: \(error?.message ?? "none")")
        #expect(error?.path == alias, "the error names the path the caller gave")

        // The other order too: the alias holds the lock, the file's own name is refused.
        try first.close()
        let viaAlias = try LogWriter(path: alias)
        #expect(throws: LogFormatError.self) { _ = try LogWriter(path: path) }
        try viaAlias.close()
    }

    @Test(
        "a writer is refused while another process holds the lock through another name, naming its pid",
        arguments: SecondName.allCases)
    func otherProcessThroughAnotherName(name: SecondName) throws {
        try TestLog.make(at: path, transactionCount: 2)
        let alias = try name.make(for: path, in: directory)
        let holder = try ForeignLockHolder(path: alias)
        let before = try LogFileSurgery.bytes(of: path)
        let error = #expect(throws: LogFormatError.self) { _ = try LogWriter(path: path) }
        #expect(error?.code == .locked)
        #expect(
            error?.message.contains("in use by another process (pid \(holder.pid))") == true,
            "message: \(error?.message ?? "none")")
        #expect(try LogFileSurgery.bytes(of: path) == before)
        // Readers take no lock, by either name.
        #expect(try Replay.read(alias).transactions == TestLog.expected(1...2))

        holder.stop()
        let writer = try LogWriter(path: alias)
        #expect(writer.lastTransactionID == 2)
        try writer.close()
    }

    @Test("the lock moves to the rewritten file: other processes stay locked out after a compaction")
    func lockSurvivesRewrite() throws {
        try TestLog.make(at: path, transactionCount: 3)
        let alias = try SecondName.hardLink.make(for: path, in: directory)
        let writer = try LogWriter(path: path)
        #expect(try anotherProcessCanLock(path) == false)
        _ = try writer.rewrite(
            schema: SchemaPayload(modelName: "Lock", versionIdentifier: "1", modelHash: 1, entities: []),
            begin: CheckpointBegin(lastTransactionID: 3, lastCommitTimeMicroseconds: 0, nextKey: 1, objectCount: 0),
            end: CheckpointEnd(objectCount: 0, stateDigest: [1])
        ) { _ in }
        #expect(try anotherProcessCanLock(path) == false, "the new file is locked before it replaces the old one")
        let symlink = try SecondName.absoluteSymlink.make(for: path, in: directory)
        let error = #expect(throws: LogFormatError.self) { _ = try LogWriter(path: symlink) }
        #expect(error?.code == .locked)
        // The hard link still names the old file, which is no longer the store; it may be opened on its own.
        #expect(try anotherProcessCanLock(alias) == true)
        try writer.appendTransaction(id: 4, payload: TestLog.payload(for: 4))
        try writer.close()
        #expect(try anotherProcessCanLock(path) == true, "close releases the lock")
    }
}

/// Nothing at `<log path>.lock` is opened, truncated or written: a symlink planted there cannot make a writer
/// overwrite another file (issue 9, item 4). The lock is the log's own; the pid of a holder comes from the kernel.
@Suite("Planted lock path")
struct PlantedLockPathTests {
    enum Plant: String, CaseIterable, CustomTestStringConvertible {
        case symlinkToVictim, directory, fifo
        var testDescription: String { rawValue }
    }

    let directory = TemporaryDirectory()
    var path: String { directory.file("store.eglog") }

    @Test("a writer opens and leaves what is planted at PATH.lock untouched", arguments: Plant.allCases)
    func plantedLockPath(plant: Plant) throws {
        try TestLog.make(at: path, transactionCount: 2)
        let victim = directory.file("victim.txt")
        try Data("precious data\n".utf8).write(to: URL(fileURLWithPath: victim))
        let planted = path + ".lock"
        try? FileManager.default.removeItem(atPath: planted)  // what earlier versions left there
        switch plant {
        case .symlinkToVictim: try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: victim)
        case .directory: try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: false)
        case .fifo: #expect(mkfifo(planted, 0o600) == 0)
        }
        let writer = try LogWriter(path: path)
        try writer.appendTransaction(id: 3, payload: TestLog.payload(for: 3))
        try writer.close()
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious data\n")
        #expect(PathFacts.isSymlink(planted) == (plant == .symlinkToVictim))
        #expect(try Replay.read(path).transactions == TestLog.expected(1...3))
    }
}
