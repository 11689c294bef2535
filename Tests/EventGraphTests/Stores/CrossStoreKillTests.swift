import Foundation
import Testing

/// A process killed (SIGKILL) at each step of a save across two stores: `KillNine cross-store` kills a saver at
/// every step, reopens the two stores together, and checks that both hold the save or neither (the save is in
/// neither until the second store's part is written, in both after), and that reopening changes no digest.
@Suite("A save across stores killed at any step")
struct CrossStoreKillTests {
    /// The `KillNine` built next to the test bundle (the test target depends on it, so SwiftPM builds it first).
    static let killNine: URL? = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("KillNine")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }()

    @Test func bothStoresHoldTheSaveOrNeitherAfterAKillAtEveryStep() throws {
        let executable = try #require(Self.killNine, "KillNine is built with the tests")
        let directory = TemporaryDirectory()
        let process = Process()
        process.executableURL = executable
        process.arguments = ["cross-store", "--directory", directory.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        let lines = text.split(separator: "\n").map(String.init)
        #expect(
            lines == [
                "prepared: neither store holds the save", "written-0: neither store holds the save",
                "written-1: both stores hold the save", "synced: both stores hold the save",
                "installed: both stores hold the save", "none: both stores hold the save",
            ])
    }
}
