import Foundation

/// `KillNine save --store PATH --writers N --seed S` saves until killed; `KillNine drive [OPTIONS]` kills it in a
/// loop and checks the store after every kill; `KillNine migrate [OPTIONS]` kills `egctl migrate` the same way;
/// `KillNine cross-store` kills a save across two stores at each of its steps and checks both-or-neither.
/// See `Docs/Testing.md`.
@main
enum KillNine {
    static let usage = """
        usage: KillNine drive [--cycles N] [--seed S] [--writers N] [--cycles-per-store N] [--power-loss]
                              [--directory DIR] [--egctl PATH]
               KillNine save --store PATH --writers N --seed S
               KillNine migrate [--cycles N] [--seed S] [--entries N] [--directory DIR] [--egctl PATH]
               KillNine cross-store [--directory DIR]
               KillNine cross-store-save --directory DIR --kill-at STEP
        """

    static func main() {
        var arguments = Arguments(Array(CommandLine.arguments.dropFirst()))
        switch arguments.command {
        case "save":
            let saver = Saver(
                storePath: arguments.required("--store"), writerCount: arguments.int("--writers") ?? 4,
                seed: arguments.uint64("--seed") ?? 1)
            arguments.finish()
            saver.run()
        case "migrate":
            let directory =
                arguments.string("--directory")
                ?? FileManager.default.temporaryDirectory.path + "/killnine-migrate-\(getpid())"
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let driver = MigrationDriver(
                cycleCount: arguments.int("--cycles") ?? 50,
                seed: arguments.uint64("--seed") ?? UInt64.random(in: 1...UInt64.max),
                entryCount: arguments.int("--entries") ?? 2_000, directory: directory,
                egctlPath: arguments.string("--egctl") ?? binDirectory() + "/egctl")
            arguments.finish()
            driver.run()
        case "cross-store":
            let directory =
                arguments.string("--directory")
                ?? FileManager.default.temporaryDirectory.path + "/killnine-cross-store-\(getpid())"
            arguments.finish()
            let executable =
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0]
            CrossStoreKill.drive(directory: directory, executablePath: executable)
        case "cross-store-save":
            let directory = arguments.required("--directory")
            let step = arguments.required("--kill-at")
            arguments.finish()
            CrossStoreKill.save(directory: directory, killAt: step)
        case "drive":
            let executable =
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0]
            let binDirectory = URL(fileURLWithPath: executable).deletingLastPathComponent().path
            let directory =
                arguments.string("--directory")
                ?? FileManager.default.temporaryDirectory.path + "/killnine-\(getpid())"
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let driver = Driver(
                cycleCount: arguments.int("--cycles") ?? 50,
                seed: arguments.uint64("--seed") ?? UInt64.random(in: 1...UInt64.max),
                writerCount: arguments.int("--writers") ?? 4,
                cyclesPerStore: arguments.int("--cycles-per-store") ?? 25,
                powerLoss: arguments.flag("--power-loss"), directory: directory, executablePath: executable,
                egctlPath: arguments.string("--egctl") ?? binDirectory + "/egctl")
            arguments.finish()
            driver.run()
        default:
            fail()
        }
    }

    /// The folder of this executable (where `swift build` puts `egctl` too).
    static func binDirectory() -> String {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: executable).deletingLastPathComponent().path
    }

    static func fail() -> Never {
        FileHandle.standardError.write(Data((usage + "\n").utf8))
        exit(2)
    }
}

/// `--name value` options after a command word.
struct Arguments {
    var command: String?
    private var rest: [String]

    init(_ arguments: [String]) {
        command = arguments.first
        rest = Array(arguments.dropFirst())
    }

    mutating func string(_ name: String) -> String? {
        guard let index = rest.firstIndex(of: name), index + 1 < rest.count else { return nil }
        defer { rest.removeSubrange(index...index + 1) }
        return rest[index + 1]
    }

    mutating func required(_ name: String) -> String {
        guard let value = string(name) else { KillNine.fail() }
        return value
    }

    mutating func int(_ name: String) -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text) else { KillNine.fail() }
        return value
    }

    mutating func uint64(_ name: String) -> UInt64? {
        guard let text = string(name) else { return nil }
        guard let value = UInt64(text) else { KillNine.fail() }
        return value
    }

    mutating func flag(_ name: String) -> Bool {
        guard let index = rest.firstIndex(of: name) else { return false }
        rest.remove(at: index)
        return true
    }

    /// Refuses anything left over (a misspelt option).
    func finish() {
        if !rest.isEmpty { KillNine.fail() }
    }
}
