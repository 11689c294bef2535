import Foundation
import Testing

/// Another name for an existing file: what a symlink, a hard link or a bind mount gives a second process.
enum SecondName: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// A symbolic link holding the file's absolute path.
    case absoluteSymlink
    /// A symbolic link in another directory holding a relative path (`../store.eglog`).
    case relativeSymlink
    /// A link to a link to the file.
    case symlinkChain
    /// A second directory entry for the same inode.
    case hardLink

    var testDescription: String { rawValue }

    /// Creates the second name for `target` inside `directory` and returns it.
    func make(for target: String, in directory: TemporaryDirectory) throws -> String {
        let manager = FileManager.default
        let name = (target as NSString).lastPathComponent
        switch self {
        case .absoluteSymlink:
            let link = directory.file("alias.eglog")
            try manager.createSymbolicLink(atPath: link, withDestinationPath: target)
            return link
        case .relativeSymlink:
            try manager.createDirectory(atPath: directory.file("sub"), withIntermediateDirectories: true)
            let link = directory.file("sub/alias.eglog")
            try manager.createSymbolicLink(atPath: link, withDestinationPath: "../" + name)
            return link
        case .symlinkChain:
            let first = directory.file("first.eglog")
            try manager.createSymbolicLink(atPath: first, withDestinationPath: target)
            let second = directory.file("second.eglog")
            try manager.createSymbolicLink(atPath: second, withDestinationPath: "first.eglog")
            return second
        case .hardLink:
            let link = directory.file("hardlink.eglog")
            try manager.linkItem(atPath: target, toPath: link)
            return link
        }
    }
}

/// Facts about a path that the tests compare before and after an operation.
enum PathFacts {
    /// Whether `path` itself (not what it points to) is a symbolic link.
    static func isSymlink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
    }

    /// The inode `path` reaches (following links).
    static func inode(_ path: String) -> UInt64? {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_ino) : nil
    }

    /// Permission bits, owner and group of what `path` reaches.
    static func ownership(_ path: String) -> (permissions: UInt32, owner: UInt32, group: UInt32)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (UInt32(info.st_mode) & 0o7777, UInt32(info.st_uid), UInt32(info.st_gid))
    }
}

/// A child process holding an exclusive `flock` on a file (the writer lock's protocol) until it is stopped.
final class ForeignLockHolder {
    let process = Process()
    private let input = Pipe()

    /// Starts `flock(1)`, which opens `path`, takes the lock itself (so the kernel names it as the holder), and
    /// runs a shell that says so and waits for its input to close; `--close` keeps the lock out of the shell.
    init(path: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        process.arguments = ["--exclusive", "--close", path, "/bin/sh", "-c", "echo locked; read line"]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        // Waiting for the line is a handshake, not a timing: the shell runs only once the lock is held, and a
        // child that dies closes the pipe, which ends the read.
        let line = output.fileHandleForReading.availableData
        guard String(decoding: line, as: UTF8.self).hasPrefix("locked") else {
            process.terminate()  // still waiting for the lock, or already gone
            process.waitUntilExit()
            throw LockHolderError.didNotLock(path)
        }
    }

    var pid: Int32 { process.processIdentifier }

    /// Ends the holder, releasing the lock: the shell reads the end of its input and exits, and so does flock.
    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    deinit { stop() }

    enum LockHolderError: Error { case didNotLock(String) }
}

/// `flock -n` in a child process: whether another process could take the writer lock on `path` right now.
func anotherProcessCanLock(_ path: String) throws -> Bool {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
    process.arguments = ["--nonblock", "--exclusive", path, "true"]
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus == 0
}
