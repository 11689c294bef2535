import ArgumentParser
import Foundation
import LogFormat

/// `egctl demo PATH [--posts N] [--seed S]`
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a sample store with seed 000's blog model: authors, posts, tags and categories.",
        discussion: """
            Writes the posts in many saves of varied size (mostly 1–20 posts, sometimes hundreds), with updates and \
            deletes so that history exists, then closes the store cleanly. The same --seed gives the same store.

            Examples:
              egctl demo /tmp/blog.eglog
              egctl demo /tmp/big.eglog --posts 1000000 --seed 7
              egctl demo /tmp/history.eglog --posts 100000 --updates 1000000
            """)

    @Argument(help: "Path of the store to create (must not exist).", completion: .file())
    var path: String
    @Option(help: "How many posts to write.")
    var posts = 2000
    @Option(help: "Title updates to write after the posts, in saves of 1–200 (a long history for compaction).")
    var updates = 0
    @Option(help: "Seed of the generator.")
    var seed: UInt64 = 1
    @Flag(name: .long, help: "Print a JSON summary.")
    var json = false

    func validate() throws {
        guard posts >= 0 else { throw ValidationError("--posts must be 0 or more") }
        guard updates >= 0 else { throw ValidationError("--updates must be 0 or more") }
    }

    func run() throws {
        try Failure.guarding {
            if FileManager.default.fileExists(atPath: path) {
                throw ValidationError("\(path) already exists; demo creates a new store")
            }
            let started = Progress.now()
            let writer = try LogWriter(path: path, options: .init(durability: .normal))
            try writer.append(schema: BlogWorkload.schema)
            var workload = BlogWorkload(posts: posts, updates: updates, seed: seed)
            let progress = Progress("demo", totalByteCount: UInt64(max(posts, 1)))
            var transactions = 0
            while let changeset = workload.next() {
                try writer.appendTransaction(id: changeset.transactionID, payload: try changeset.encoded())
                transactions += 1
                progress.update(byteOffset: UInt64(workload.postsWritten))
            }
            try writer.close()
            progress.finish()
            let seconds = Double(Progress.now() - started) / 1e9
            let size = writer.byteCount
            if json {
                JSONOutput.print([
                    "path": path, "posts": posts, "transactions": transactions, "byteCount": size, "seconds": seconds,
                ])
            } else {
                print(
                    "created      \(path): \(posts) posts in \(transactions) transactions, \(Formatting.bytes(size)), "
                        + "\(Formatting.decimal(seconds, digits: 2)) s")
            }
        }
    }
}
