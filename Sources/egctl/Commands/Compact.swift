import ArgumentParser
import EventGraph
import Foundation
import LogFormat

/// `egctl compact STORE [--keep-previous] [--json]`
struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Checkpoint the live state and drop superseded history, atomically.",
        discussion: """
            Writes the live state as a checkpoint into a new file, verifies it (every frame, and that its state \
            digest equals the current one), and renames it over the store. A crash at any point leaves the old or \
            the new file complete. Refuses when another process is writing the store.

            Examples:
              egctl compact blog.eglog
              egctl compact blog.eglog --keep-previous   # old file: blog.eglog.previous
            """)

    @OptionGroup var store: StoreArgument
    @OptionGroup var output: OutputOptions
    @Flag(help: "Keep the old file next to the store, as <store>.previous.")
    var keepPrevious = false

    func run() throws {
        try Failure.guarding {
            let started = Progress.now()
            // The library's compaction: its replay (strict: a log the library would not open is not rewritten),
            // its checkpoint writer and its verification of the new file, plus a replay of the new file from its
            // bytes (the library's own compaction checks the frames' checksums and the structure only).
            let progress = Progress("compact: replay", totalByteCount: 0)
            let container = try ModelContainer(
                path: store.store, configuration: .init(createIfMissing: false, recoveryHandler: Self.note))
            progress.finish()
            defer { try? container.close() }
            // Measured once the store is open, so a missing file is reported by the open, as a usage error.
            let oldByteCount = try Self.byteCount(store.store)
            let compacting = Progress.now()
            let compaction = try container.compact(
                keepingPreviousAt: keepPrevious ? store.store + ".previous" : nil, verifyingByReplay: true)
            let rewriteSeconds = Double(Progress.now() - compacting) / 1e9
            let newByteCount = try Self.byteCount(store.store)
            let generation = try LogReader(path: store.store).header.generation
            let previousPath = keepPrevious ? store.store + ".previous" : nil
            let seconds = Double(Progress.now() - started) / 1e9
            if output.json {
                var object: [String: Any] = [
                    "path": store.store, "oldByteCount": oldByteCount, "newByteCount": newByteCount,
                    "generation": generation, "objectCount": compaction.objectCount,
                    "stateDigest": compaction.stateDigest.description, "seconds": seconds,
                    "rewriteSeconds": rewriteSeconds,
                ]
                if let previousPath { object["previousPath"] = previousPath }
                JSONOutput.print(object)
            } else {
                let ratio = Double(newByteCount) / Double(max(oldByteCount, 1))
                print("before       \(Formatting.bytes(oldByteCount)) (\(oldByteCount) bytes)")
                print(
                    "after        \(Formatting.bytes(newByteCount)) (\(newByteCount) bytes, "
                        + "\(Formatting.decimal(ratio * 100, digits: 1)) %), generation \(generation)")
                print("objects      \(compaction.objectCount), state digest \(compaction.stateDigest) (verified)")
                print(
                    "time         \(Formatting.decimal(seconds, digits: 3)) s (rewrite "
                        + "\(Formatting.decimal(rewriteSeconds, digits: 3)) s)")
                if let previousPath { print("previous     kept at \(previousPath)") }
            }
        }
    }

    /// The size of a file (through symbolic links, as the store is opened).
    private static func byteCount(_ path: String) throws -> UInt64 {
        let attributes = try FileManager.default.attributesOfItem(atPath: (path as NSString).resolvingSymlinksInPath)
        return (attributes[.size] as? NSNumber)?.uint64Value ?? 0
    }

    /// What opening the store left out (a torn tail cut off), as a note on standard error.
    private static let note: @Sendable (StoreRecoveryReport) -> Void = { report in
        Terminal.warn("egctl: note: \(report)")
    }
}
