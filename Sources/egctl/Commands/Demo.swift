import ArgumentParser
import EventGraph
import EventGraphExamples
import Foundation

/// `egctl demo PATH [--posts N] [--updates N] [--seed S]`
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a sample blog store: authors, posts, tags and categories.",
        discussion: """
            The store uses the model of the example blog app (Examples/Blog in the EventGraph repository), so that \
            app opens it. Posts are written in many saves of varied size (mostly 1–20 posts, sometimes hundreds), \
            with title updates and deletes so that history exists; then the store is closed cleanly. The same \
            --seed gives the same objects and values (the same state digest).

            Examples:
              egctl demo /tmp/blog.eglog
              egctl demo /tmp/big.eglog --posts 1000000 --seed 7
              egctl demo /tmp/history.eglog --posts 100000 --updates 1000000
            """)

    @Argument(help: "Path of the store to create (must not exist).", completion: .file())
    var path: String
    @Option(help: ArgumentHelp("How many posts to write.", valueName: "n"))
    var posts = 2000
    @Option(
        help: ArgumentHelp(
            "Title updates to write after the posts, in saves of 1–200 (a long history to compact).", valueName: "n"))
    var updates = 0
    @Option(help: ArgumentHelp("Seed of the generated content.", valueName: "n"))
    var seed: UInt64 = 1
    @Flag(name: .long, help: "Print a JSON summary.")
    var json = false

    func validate() throws {
        guard posts >= 0 else { throw ValidationError("--posts must be 0 or more") }
        guard updates >= 0 else { throw ValidationError("--updates must be 0 or more") }
    }

    func run() throws {
        try Failure.guarding {
            // Checked here as well as by the open below (which would create the file): demo never adds to a store.
            if FileManager.default.fileExists(atPath: path) {
                throw ValidationError("\(path) already exists; demo creates a new store")
            }
            let started = Progress.now()
            // `.normal` durability: a demo store is rebuilt, not recovered, and a sync per save would dominate.
            let container = try ModelContainer(
                path: path, model: BlogLibrary.model, configuration: .init(durability: .normal))
            let context = container.newBackgroundContext(name: "egctl demo")
            var workload = DemoWorkload(posts: posts, updates: updates, seed: seed)
            let progress = Progress("demo", totalByteCount: UInt64(max(posts + updates, 1)))
            do {
                while !workload.isFinished {
                    try workload.saveNext(in: context)
                    progress.update(byteOffset: UInt64(workload.postsWritten + updates - workload.remainingUpdates))
                }
            } catch {
                try? container.close()
                throw error
            }
            try container.close()
            progress.finish()
            let seconds = Double(Progress.now() - started) / 1e9
            let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.uint64Value ?? 0
            if json {
                JSONOutput.print([
                    "path": path, "posts": posts, "transactions": workload.saveCount, "byteCount": size,
                    "seconds": seconds,
                ])
            } else {
                print(
                    "created      \(path): \(posts) posts in \(workload.saveCount) transactions, "
                        + "\(Formatting.bytes(size)), \(Formatting.decimal(seconds, digits: 2)) s")
            }
        }
    }
}
