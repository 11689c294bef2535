import Dispatch
import Foundation
import LogFormat
import Testing

/// Runs the built `egctl` binary.
enum Egctl {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// Whether the run was killed for taking longer than its `timeoutSeconds` (a hang guard, not a timing).
        var timedOut = false

        /// stdout parsed as one JSON object.
        func json() throws -> [String: Any] {
            let object = try JSONSerialization.jsonObject(with: Data(stdout.utf8))
            return try #require(object as? [String: Any], "stdout is not a JSON object: \(stdout)")
        }
    }

    /// The `egctl` next to the test bundle in the build folder.
    static let executable: URL = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("egctl")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        // `swift test` builds egctl into the same folder as the test bundle; fall back to the default one.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/egctl")
    }()

    @discardableResult
    static func run(_ arguments: String...) throws -> Result { try run(arguments) }

    /// Runs egctl with `arguments`; `environment` is added to the test's own. With `timeoutSeconds`, kills it if it
    /// is still running then (a hang guard for tests whose regression would block forever).
    static func run(
        _ arguments: [String], environment extra: [String: String] = [:], timeoutSeconds: Int? = nil
    ) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let killed = KillSwitch()
        if let timeoutSeconds {
            let pid = process.processIdentifier
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(timeoutSeconds)) {
                killed.fire { kill(pid, SIGKILL) }
            }
        }
        // Read before waiting so a large output cannot fill the pipe and block the child.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let timedOut = killed.disarm()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self), timedOut: timedOut)
    }

    /// Fires at most once, and never after it is disarmed (so a finished child's pid, possibly reused, is never
    /// killed).
    private final class KillSwitch: Sendable {
        private let state = LockedValue<(armed: Bool, fired: Bool)>((true, false))

        func fire(_ action: () -> Void) {
            state.withLock { state in
                guard state.armed else { return }
                state.fired = true
                action()
            }
        }

        /// Disarms the switch; returns whether it had fired.
        func disarm() -> Bool {
            state.withLock { state in
                state.armed = false
                return state.fired
            }
        }
    }
}

/// A temporary directory removed at the end of a test.
final class Scratch {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.path + "/egctl-test-" + UUID().uuidString.prefix(8)
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }
}
