import ArgumentParser

/// The root command: `egctl <subcommand>`.
@main
struct Egctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "egctl",
        abstract: "Inspect, check, replay, repair and shrink EventGraph stores, without the application's code.",
        subcommands: [])
}
