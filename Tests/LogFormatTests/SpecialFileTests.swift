import Dispatch
import Foundation
import Testing

@testable import LogFormat

/// A path that is not a regular file (a FIFO, a socket, a device, a directory) is refused at once with an error
/// naming it and what it is; opening a FIFO must never wait for a writer (issue 9, item 11).
@Suite("Special files as the store path")
struct SpecialFileTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case fifo, socket, characterDevice, directory
        var testDescription: String { rawValue }
        /// The word the error must use for it.
        var word: String {
            switch self {
            case .fifo: "FIFO"
            case .socket: "socket"
            case .characterDevice: "character device"
            case .directory: "directory"
            }
        }
    }

    enum Opener: String, CaseIterable, CustomTestStringConvertible {
        case reader, writer, salvage
        var testDescription: String { rawValue }

        func open(_ path: String, scratch: String) throws {
            switch self {
            case .reader: _ = try LogReader(path: path)
            case .writer: _ = try LogWriter(path: path)
            case .salvage: _ = try Salvage.salvage(path: path, to: scratch)
            }
        }
    }

    let directory = TemporaryDirectory()

    private func make(_ kind: Kind) throws -> String {
        switch kind {
        case .fifo:
            let path = directory.file("fifo.eglog")
            #expect(mkfifo(path, 0o600) == 0)
            return path
        case .socket:
            let path = directory.file("sock.eglog")
            try UnixSocket.bind(at: path)
            return path
        case .characterDevice:
            return "/dev/null"
        case .directory:
            let path = directory.file("dir.eglog")
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            return path
        }
    }

    @Test(
        "every opener refuses a path that is not a regular file, naming it and its kind, without blocking",
        arguments: Kind.allCases, Opener.allCases)
    func refused(kind: Kind, opener: Opener) throws {
        let path = try make(kind)
        let scratch = directory.file("salvaged.eglog")
        let outcome = FIFOWatchdog.run(unblocking: kind == .fifo ? path : nil) {
            do {
                try opener.open(path, scratch: scratch)
                return nil
            } catch {
                return error
            }
        }
        #expect(!outcome.blocked, "the opener waited for a writer on the FIFO")
        let error = try #require(outcome.error as? LogFormatError, "\(String(describing: outcome.error))")
        #expect(error.code == .notALog)
        #expect(error.path == path)
        #expect(error.message.contains("is a \(kind.word)"), "message: \(error.message)")
        #expect(!FileManager.default.fileExists(atPath: scratch), "nothing is written")
    }

    @Test("a symlink to a FIFO is refused the same way")
    func symlinkToFIFO() throws {
        let fifo = try make(.fifo)
        let link = directory.file("link.eglog")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: fifo)
        let outcome = FIFOWatchdog.run(unblocking: fifo) {
            do { _ = try LogReader(path: link) } catch { return error }
            return nil
        }
        #expect(!outcome.blocked)
        #expect((outcome.error as? LogFormatError)?.message.contains("FIFO") == true)
    }
}

/// Runs an open that might block on a FIFO on its own thread. A hang guard, not a timing assertion: if the call
/// has not returned after a generous while, it is stuck waiting for a writer, so the guard opens the FIFO's write
/// end (which lets the call return) and reports that it blocked.
enum FIFOWatchdog {
    static let patienceSeconds = 600

    static func run(unblocking fifo: String?, _ body: @escaping @Sendable () -> (any Error)?) -> (
        error: (any Error)?, blocked: Bool
    ) {
        final class Box: Sendable {
            let error = LockedValue<(any Error)?>(nil)
        }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        Thread {
            let error = body()
            box.error.withLock { $0 = error }
            done.signal()
        }.start()
        if done.wait(timeout: .now() + .seconds(patienceSeconds)) == .success {
            return (box.error.withLock { $0 }, false)
        }
        if let fifo {
            let writeEnd = open(fifo, O_WRONLY | O_NONBLOCK)
            done.wait()
            if writeEnd >= 0 { close(writeEnd) }
        } else {
            done.wait()
        }
        return (box.error.withLock { $0 }, true)
    }
}

/// A listening Unix-domain socket file, for tests that hand one to an opener.
enum UnixSocket {
    static func bind(at path: String) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        precondition(bytes.count < MemoryLayout.size(ofValue: address.sun_path), "socket path too long: \(path)")
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }
}
