import Foundation
import Testing

@testable import LogFormat

/// Rewrites, creation and salvage act on the file a symlink points to, never on the link: replacing the link
/// would leave two names for two different stores (issue 9, item 3).
@Suite("Rewriting through a symlink")
struct RewriteThroughLinkTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("store.eglog") }

    private func checkpoint(_ writer: LogWriter, at transactionID: UInt64, keepingPreviousAt previous: String? = nil)
        throws
    {
        _ = try writer.rewrite(
            schema: SchemaPayload(modelName: "Links", versionIdentifier: "1", modelHash: 5, entities: []),
            begin: CheckpointBegin(
                lastTransactionID: transactionID, lastCommitTimeMicroseconds: 0, nextKey: 1, objectCount: 0),
            end: CheckpointEnd(objectCount: 0, stateDigest: [5]), keepingPreviousAt: previous
        ) { _ in }
    }

    @Test(
        "a rewrite through a symlink replaces the file it points to; the link and the previous copy stay right",
        arguments: [SecondName.absoluteSymlink, .relativeSymlink, .symlinkChain])
    func rewriteThroughSymlink(name: SecondName) throws {
        try TestLog.make(at: path, transactionCount: 4)
        let alias = try name.make(for: path, in: directory)
        let inodeBefore = PathFacts.inode(path)
        let writer = try LogWriter(path: alias)
        try checkpoint(writer, at: 2, keepingPreviousAt: alias + ".previous")
        try writer.appendTransaction(id: 5, payload: TestLog.payload(for: 5))
        try writer.close()

        #expect(PathFacts.isSymlink(alias), "the link is still a link")
        #expect(PathFacts.inode(alias) == PathFacts.inode(path), "and it still names the store")
        #expect(PathFacts.inode(path) != inodeBefore, "the file it points to was replaced")
        let rewritten = try LogReader(path: path)
        #expect(rewritten.header.generation == 1)
        #expect(try Replay.read(path).transactions == TestLog.expected(3...5))

        // The previous file is the old log itself (a hard link to it), not a link to the link.
        let previous = alias + ".previous"
        #expect(!PathFacts.isSymlink(previous))
        #expect(PathFacts.inode(previous) == inodeBefore)
        #expect(try Replay.read(previous).transactions == TestLog.expected(1...4))
    }

    @Test("a log created at a dangling symlink is created where the link points", arguments: [false, true])
    func createAtDanglingLink(relative: Bool) throws {
        let target = directory.file("target.eglog")
        let link = directory.file("link.eglog")
        try FileManager.default.createSymbolicLink(
            atPath: link, withDestinationPath: relative ? "target.eglog" : target)
        try TestLog.make(at: link, transactionCount: 2)
        #expect(PathFacts.isSymlink(link))
        #expect(PathFacts.inode(link) == PathFacts.inode(target))
        #expect(try Replay.read(target).transactions == TestLog.expected(1...2))
    }

    @Test("salvage into a dangling symlink writes the file the link points to")
    func salvageIntoDanglingLink() throws {
        try TestLog.make(at: path, transactionCount: 3)
        let target = directory.file("repaired.eglog")
        let link = directory.file("repaired-link.eglog")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let report = try Salvage.salvage(path: path, to: link)
        #expect(report.isComplete)
        #expect(PathFacts.isSymlink(link))
        #expect(try Replay.read(target).transactions == TestLog.expected(1...3))
    }

    @Test("salvage refuses an output that is a symlink to an existing file, and leaves that file alone")
    func salvageIntoLinkToExistingFile() throws {
        try TestLog.make(at: path, transactionCount: 3)
        let victim = directory.file("victim.txt")
        try Data("keep me\n".utf8).write(to: URL(fileURLWithPath: victim))
        let link = directory.file("out.eglog")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: victim)
        let error = #expect(throws: LogFormatError.self) { _ = try Salvage.salvage(path: path, to: link) }
        #expect(error?.code == .invalidArgument)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep me\n")
    }
}

/// A rewrite keeps the log's permission bits, owner and group; new logs are private by default (issue 9, item 5).
@Suite("File modes and owners")
struct FileModeTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("store.eglog") }

    @Test(
        "a rewrite keeps the permission bits, and (as root) the owner and group, of the log it replaces",
        arguments: [UInt32(0o600), 0o640, 0o604])
    func rewriteKeepsModeAndOwner(permissions: UInt32) throws {
        try TestLog.make(at: path, transactionCount: 3)
        #expect(chmod(path, mode_t(permissions)) == 0)
        let isRoot = getuid() == 0
        let owner: uid_t = isRoot ? 4321 : getuid()
        let group: gid_t = isRoot ? 4322 : getgid()
        #expect(chown(path, owner, group) == 0)
        let writer = try LogWriter(path: path)
        _ = try writer.rewrite(
            schema: SchemaPayload(modelName: "Modes", versionIdentifier: "1", modelHash: 6, entities: []),
            begin: CheckpointBegin(lastTransactionID: 3, lastCommitTimeMicroseconds: 0, nextKey: 1, objectCount: 0),
            end: CheckpointEnd(objectCount: 0, stateDigest: [6])
        ) { _ in }
        try writer.close()
        #expect(try LogReader(path: path).header.generation == 1)
        let facts = try #require(PathFacts.ownership(path))
        #expect(facts.permissions == permissions)
        #expect(facts.owner == UInt32(owner))
        #expect(facts.group == UInt32(group))
    }

    @Test("a new log is readable and writable by its owner only")
    func newLogIsPrivate() throws {
        try TestLog.make(at: path, transactionCount: 1)
        #expect(PathFacts.ownership(path)?.permissions == 0o600)
    }

    @Test("a salvaged log is private too")
    func salvagedLogIsPrivate() throws {
        try TestLog.make(at: path, transactionCount: 1)
        #expect(chmod(path, 0o644) == 0)
        let output = directory.file("salvaged.eglog")
        _ = try Salvage.salvage(path: path, to: output)
        #expect(PathFacts.ownership(output)?.permissions == 0o600)
    }
}
