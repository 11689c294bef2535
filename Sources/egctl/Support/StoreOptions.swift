import ArgumentParser

/// The store file argument shared by every command.
struct StoreArgument: ParsableArguments {
    @Argument(help: "Path of the store's log file.", completion: .file())
    var store: String
}

/// Output options shared by commands that scripts call.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON instead of text.")
    var json = false
}
