import Foundation
import LogFormat
import Testing

/// egctl on a store reached by another name, and on paths that are not stores (issue 9, items 2, 3, 5, 11).
@Suite("egctl store paths")
struct EgctlPathTests {
    func makeStore(_ scratch: Scratch) throws -> String {
        let store = scratch.file("blog.eglog")
        let demo = try Egctl.run("demo", store, "--posts", "200")
        try #require(demo.status == 0, "\(demo.stderr)")
        return store
    }

    func isSymlink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
    }

    @Test(
        "compact through another name is refused while this process writes the store, naming this pid",
        arguments: [false, true])
    func compactThroughAnotherNameWhileWriting(hardLink: Bool) throws {
        let scratch = Scratch()
        let store = try makeStore(scratch)
        let alias = scratch.file("alias.eglog")
        if hardLink {
            try FileManager.default.linkItem(atPath: store, toPath: alias)
        } else {
            try FileManager.default.createSymbolicLink(atPath: alias, withDestinationPath: store)
        }
        let writer = try LogWriter(path: store, options: .init(createIfMissing: false))
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let compact = try Egctl.run("compact", alias)
        #expect(compact.status == 1, "stdout: \(compact.stdout) stderr: \(compact.stderr)")
        #expect(compact.stderr.contains("in use by another process (pid \(getpid()))"), "\(compact.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        // Read-only commands keep working by either name.
        #expect(try Egctl.run("verify", alias).status == 0)
        try writer.close()
        #expect(try Egctl.run("compact", alias).status == 0)
    }

    @Test("compact through a symlink rewrites the store the link points to, and keeps the link")
    func compactThroughSymlink() throws {
        let scratch = Scratch()
        let store = try makeStore(scratch)
        let link = scratch.file("link.eglog")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "blog.eglog")
        let digest = try Egctl.run("replay", store, "--summary", "--json").json()["stateDigest"] as? String
        let compact = try Egctl.run("compact", link, "--keep-previous")
        #expect(compact.status == 0, "\(compact.stderr)")
        #expect(isSymlink(link))
        #expect(try LogReader(path: store).header.generation == 1)
        #expect(try Egctl.run("replay", store, "--summary", "--json").json()["stateDigest"] as? String == digest)
        let previous = link + ".previous"
        #expect(!isSymlink(previous), "the previous file is the old log, not a link to the link")
        #expect(try LogReader(path: previous).header.generation == 0)
    }

    @Test("salvage into a dangling symlink writes the file the link points to")
    func salvageIntoDanglingLink() throws {
        let scratch = Scratch()
        let store = try makeStore(scratch)
        let link = scratch.file("out-link.eglog")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: scratch.file("out.eglog"))
        let salvage = try Egctl.run("salvage", store, "--output", link)
        #expect(salvage.status == 0, "\(salvage.stderr)")
        #expect(isSymlink(link))
        #expect(try Egctl.run("verify", scratch.file("out.eglog")).status == 0)
    }

    @Test("compact keeps the store's permission bits, owner and group")
    func compactKeepsOwnership() throws {
        let scratch = Scratch()
        let store = try makeStore(scratch)
        let isRoot = getuid() == 0
        #expect(chmod(store, 0o600) == 0)
        #expect(chown(store, isRoot ? 3456 : getuid(), isRoot ? 3457 : getgid()) == 0)
        let compact = try Egctl.run("compact", store)
        #expect(compact.status == 0, "\(compact.stderr)")
        var info = stat()
        #expect(stat(store, &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o600)
        #expect(info.st_uid == (isRoot ? 3456 : getuid()))
        #expect(info.st_gid == (isRoot ? 3457 : getgid()))
    }

    @Test("demo creates a private store")
    func demoStoreIsPrivate() throws {
        let scratch = Scratch()
        let store = try makeStore(scratch)
        var info = stat()
        #expect(stat(store, &info) == 0)
        #expect(info.st_mode & 0o7777 == 0o600)
    }

    static let commands: [[String]] = [
        ["verify", "PATH"], ["inspect", "PATH"], ["dump", "PATH", "--entity", "Post"],
        ["history", "PATH", "eventgraph:///Post/1"], ["replay", "PATH"], ["compact", "PATH"],
        ["salvage", "PATH", "--output", "OUT"],
    ]

    @Test(
        "every command refuses a FIFO, a directory and /dev/null with exit 2 and the kind of file, without hanging",
        arguments: commands, ["fifo", "directory", "/dev/null"])
    func specialFile(command: [String], kind: String) throws {
        let scratch = Scratch()
        let path: String
        let word: String
        switch kind {
        case "fifo":
            path = scratch.file("fifo.eglog")
            #expect(mkfifo(path, 0o600) == 0)
            word = "FIFO"
        case "directory":
            path = scratch.file("folder.eglog")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            word = "directory"
        default:
            path = kind
            word = "character device"
        }
        let output = scratch.file("salvaged.eglog")
        let arguments = command.map { $0 == "PATH" ? path : $0 == "OUT" ? output : $0 }
        // A hang guard (an open of a FIFO without a writer never returns), long enough for a loaded machine.
        let result = try Egctl.run(arguments, timeoutSeconds: 600)
        #expect(!result.timedOut, "egctl \(command[0]) blocked on the \(kind)")
        #expect(result.status == 2, "stderr: \(result.stderr)")
        #expect(result.stderr.contains(path), "stderr: \(result.stderr)")
        #expect(result.stderr.contains("is a \(word)"), "stderr: \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}
