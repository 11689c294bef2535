import Foundation

/// Runs the `StoreProbe` executable (`Tests/StoreProbe`): a fresh launch of an app in its own process.
enum StoreProbe {
    struct Result {
        var status: Int32
        var output: String
    }

    /// The `StoreProbe` next to the test bundle in the build folder.
    static let executable: URL = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("StoreProbe")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/StoreProbe")
    }()

    /// Runs `StoreProbe command path` and collects its standard output.
    static func run(_ command: String, path: String) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = [command, path]
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: String(decoding: output, as: UTF8.self))
    }
}
