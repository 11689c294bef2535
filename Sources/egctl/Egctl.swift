import ArgumentParser
import Foundation

/// The root command: `egctl <subcommand>`.
@main
struct Egctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "egctl",
        abstract: "Inspect, check, replay, repair and shrink EventGraph stores.",
        discussion: """
            Every command except demo reads the model recorded in the store's log, so no application code is \
            needed.

            Exit status: 0 success; 1 damage found, or the command failed on a store; 2 usage error, or a file \
            that is not a store.

            Example session:
              egctl demo /tmp/blog.eglog
              egctl inspect /tmp/blog.eglog
              egctl replay /tmp/blog.eglog --summary
              egctl compact /tmp/blog.eglog
              egctl verify /tmp/blog.eglog
            """,
        subcommands: [
            Demo.self, Inspect.self, Replay.self, Verify.self, Compact.self, Dump.self, History.self,
            SalvageCommand.self, Migrate.self,
        ])

    /// Parses and runs, with egctl's exit statuses: argument errors exit with 2 (not ArgumentParser's 64), so that
    /// scripts can tell "bad input" (2) from "damage found" (1).
    static func main() {
        AllocatorTuning.apply()
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                Terminal.warn(fullMessage(for: error))
                Foundation.exit(ExitStatus.usage.rawValue)
            }
            exit(withError: error)
        }
    }
}
