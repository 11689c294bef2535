import ArgumentParser
import EventGraph
import LogFormat

/// `egctl inspect STORE [--dot] [--json]`
struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Describe a store: format, identity, model, object counts, transactions, size, compression, and the other "
            + "stores it refers to with how many references point at each.",
        discussion: """
            Reads the model recorded in the log, so it works on any store.

            Examples:
              egctl inspect blog.eglog
              egctl inspect blog.eglog --json
              egctl inspect blog.eglog --dot | dot -Tsvg > model.svg
            """)

    @OptionGroup var store: StoreArgument
    @OptionGroup var output: OutputOptions
    @Flag(help: "Print the model as a Graphviz diagram (entities with attributes; relationships as edges).")
    var dot = false

    func run() throws {
        try Failure.guarding {
            let loaded = try StoreLoader.load(store.store, label: "inspect")
            if dot {
                print(ModelDiagram.dot(loaded.graph.catalog?.schema))
                return
            }
            let summary = StoreSummary(loaded)
            if output.json { JSONOutput.print(summary.json) } else { print(summary.text) }
        }
    }
}
