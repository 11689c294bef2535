import Foundation

/// Runs a program in a child process and reports, besides its exit, that child's own peak resident memory.
///
/// A child's `ru_maxrss` starts at the high-water mark of the process that executed it, so the test process
/// (large, and running tests in parallel) cannot measure its children itself: the small `StoreProbe measure`
/// runs the program and reports what `wait4` says about it alone.
enum MeasuredProcess {
    struct Result: CustomStringConvertible {
        /// The exit status, or nil when a signal ended the child (a trap).
        var exitStatus: Int32?
        var signal: Int32?
        var stdout: String
        var stderr: String
        /// The child's peak resident set size.
        var peakResidentBytes: Int

        var description: String {
            let end = exitStatus.map { "exit \($0)" } ?? "signal \(signal ?? 0)"
            return "\(end), peak \(peakResidentBytes / 1_000_000) MB; stdout: \(stdout.prefix(400)) stderr: "
                + "\(stderr.prefix(400))"
        }
    }

    /// `StoreProbe` (`Tests/StoreProbe`), next to `egctl` in the build folder.
    static let probe = Egctl.executable.deletingLastPathComponent().appendingPathComponent("StoreProbe").path

    static func run(_ executable: String, _ arguments: [String]) throws -> Result {
        let scratch = FileManager.default.temporaryDirectory.path + "/measured-\(UUID().uuidString)"
        let (outPath, errPath, reportPath) = (scratch + ".out", scratch + ".err", scratch + ".report")
        defer { for path in [outPath, errPath, reportPath] { try? FileManager.default.removeItem(atPath: path) } }
        for path in [outPath, errPath] where !FileManager.default.createFile(atPath: path, contents: nil) {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: probe)
        process.arguments = ["measure", reportPath, executable] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"  // a trap must show up as a signal, quickly
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        try process.run()
        process.waitUntilExit()
        let report = try String(contentsOfFile: reportPath, encoding: .utf8).split(separator: "\n")
        let end = report[0].split(separator: " ")
        let peak = report[1].split(separator: " ")
        return Result(
            exitStatus: end[0] == "exit" ? Int32(end[1]) : nil, signal: end[0] == "signal" ? Int32(end[1]) : nil,
            stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "",
            peakResidentBytes: Int(peak[1]) ?? Int.max)
    }
}
