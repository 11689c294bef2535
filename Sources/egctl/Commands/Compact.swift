import ArgumentParser
import EventGraph
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
            var graph = LogGraph()
            let progress = Progress("compact: replay", totalByteCount: 0)
            let writer = try LogWriter(path: store.store, options: .init(createIfMissing: false)) { record in
                try graph.apply(record)
            }
            progress.finish()
            defer { try? writer.close() }
            guard let schema = graph.catalog?.schema else {
                throw LogFormatError(
                    .invalidArgument, "has no model recorded, so it cannot be checkpointed",
                    path: store.store)
            }
            let before = graph.digest()
            let reader = try LogReader(path: store.store)
            let blobs = graph.referencedBlobs()
            let objectCount = UInt64(graph.objectCount)
            let report = try writer.rewrite(
                schema: schema,
                begin: CheckpointBegin(
                    lastTransactionID: graph.lastTransactionID,
                    lastCommitTimeMicroseconds: graph.lastCommitTimeMicroseconds, nextKey: graph.nextKey,
                    objectCount: objectCount),
                end: CheckpointEnd(objectCount: objectCount, stateDigest: before.bytes),
                keepingPreviousAt: keepPrevious ? store.store + ".previous" : nil,
                writeCheckpoint: { sink in
                    for (reference, location) in blobs {
                        try sink.appendBlob(reference, bytes: try reader.readBlob(at: location.byteOffset))
                    }
                    try graph.forEachCheckpointChunk { try sink.append($0) }
                    graph = LogGraph()  // free the live graph before the verification replay builds another
                },
                verify: { temporary in
                    var check = LogGraph()
                    try LogReader(path: temporary).scan { try check.apply($0) }
                    let after = check.digest()
                    guard after == before else {
                        throw LogFormatError(
                            .verificationFailed,
                            "the compacted file's state digest \(after) differs from the store's \(before); the store "
                                + "was left unchanged", path: temporary)
                    }
                })
            let seconds = Double(Progress.now() - started) / 1e9
            if output.json {
                var object: [String: Any] = [
                    "path": store.store, "oldByteCount": report.oldByteCount, "newByteCount": report.newByteCount,
                    "generation": report.generation, "objectCount": objectCount, "stateDigest": before.description,
                    "seconds": seconds, "rewriteSeconds": Double(report.durationNanoseconds) / 1e9,
                ]
                if let previous = report.previousPath { object["previousPath"] = previous }
                JSONOutput.print(object)
            } else {
                let ratio = Double(report.newByteCount) / Double(max(report.oldByteCount, 1))
                print("before       \(Formatting.bytes(report.oldByteCount)) (\(report.oldByteCount) bytes)")
                print(
                    "after        \(Formatting.bytes(report.newByteCount)) (\(report.newByteCount) bytes, "
                        + "\(Formatting.decimal(ratio * 100, digits: 1)) %), generation \(report.generation)")
                print("objects      \(objectCount), state digest \(before) (verified)")
                print(
                    "time         \(Formatting.decimal(seconds, digits: 3)) s (rewrite "
                        + "\(Formatting.decimal(Double(report.durationNanoseconds) / 1e9, digits: 3)) s)")
                if let previous = report.previousPath { print("previous     kept at \(previous)") }
            }
        }
    }
}
