import ArgumentParser
import EventGraph
import Foundation
import LogFormat

/// `egctl replay STORE [--from TXN] [--until TXN | --at DATE] [--changesets | --summary] [--json]`
struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replay a store's log, checking every frame; print its changesets or a summary with a state digest.",
        // The generated usage line runs past 80 columns; this one groups the choices.
        usage: """
            egctl replay <store> [--summary | --changesets] [--json]
                         [--from <transaction>] [--until <transaction> | --at <time>]
            """,
        discussion: """
            Never modifies the file and works while another process writes the store. --until and --at replay only \
            up to that point: the store as it was then. The state digest is a hash over every live object, its \
            attributes and relationships; two stores with the same state have the same digest.

            Examples:
              egctl replay blog.eglog --summary
              egctl replay blog.eglog --changesets --from 40 --until 42
              egctl replay blog.eglog --at 2026-11-22T10:00:00Z --summary --json
            """)

    @OptionGroup var store: StoreArgument
    @OptionGroup var output: OutputOptions
    @Option(
        help: ArgumentHelp(
            "Print changesets starting with this transaction (replay still starts at the beginning).",
            valueName: "transaction"))
    var from: UInt64?
    @Option(help: ArgumentHelp("Replay up to and including this transaction.", valueName: "transaction"))
    var until: UInt64?
    @Option(
        help: ArgumentHelp(
            "Replay the transactions committed at or before this time (ISO 8601, e.g. 2026-11-22T10:00:00Z).",
            valueName: "time"))
    var at: String?
    @Flag(
        help: """
            Print every changeset: transaction, time, author, and every operation with its values (with --json, \
            one JSON object per line).
            """)
    var changesets = false
    @Flag(help: "Print counts and the state digest (the default).")
    var summary = false

    func validate() throws {
        if until != nil && at != nil { throw ValidationError("use either --until or --at, not both") }
        if changesets && summary { throw ValidationError("use either --changesets or --summary, not both") }
        if let at, Self.parseDate(at) == nil {
            throw ValidationError("--at '\(at)' is not an ISO 8601 time such as 2026-11-22T10:00:00Z")
        }
    }

    static func parseDate(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withFullDate]
        return formatter.date(from: text)
    }

    func run() throws {
        try Failure.guarding {
            let limit: StoreLoader.Limit =
                if let until { .transaction(until) } else if let at, let date = Self.parseDate(at) {
                    .time(microseconds: Int64(date.timeIntervalSince1970 * 1e6))
                } else { .none }
            let started = Progress.now()
            let printer = ChangesetPrinter(
                json: output.json, storeUUID: try LogReader(path: store.store).header.storeUUID)
            let from = self.from ?? 0
            // Only --changesets reads the changesets: a summary's replay builds none (their values go from the
            // payloads into the state's columns).
            let each: ((Changeset, TransactionRecord, LogGraph) throws -> Void)? =
                changesets
                ? { changeset, _, graph in
                    guard changeset.transactionID >= from else { return }
                    printer.print(changeset, graph: graph)
                } : nil
            let usageBefore = ReplayDiagnostics.threadUsage
            let loaded = try StoreLoader.load(store.store, limit: limit, each: each)
            if let usageBefore, let usageAfter = ReplayDiagnostics.threadUsage {
                ReplayDiagnostics.report(
                    "the replaying thread took \(usageAfter.faults - usageBefore.faults) page faults and "
                        + "\((usageAfter.cpuMicroseconds - usageBefore.cpuMicroseconds) / 1000) ms of CPU")
            }
            if let until, loaded.graph.lastTransactionID < until, loaded.report.lastTransactionID < until {
                Terminal.warn("egctl: note: the log ends at transaction \(loaded.report.lastTransactionID)")
            }
            if changesets {
                if let part = loaded.undecidedPart { Terminal.warn("egctl: note: " + part.text) }
                return
            }
            let digest = loaded.graph.digest()
            // The time includes the digest: it is part of what the command does (it was left out before, and the
            // rate printed was a third above what a user waited for).
            let seconds = Double(Progress.now() - started) / 1e9
            let issues = loaded.graph.anomalies
            if output.json {
                JSONOutput.print([
                    "lastTransactionID": loaded.graph.lastTransactionID,
                    "transactionsReplayed": loaded.appliedTransactionCount,
                    "objectCount": loaded.graph.objectCount,
                    "stateDigest": digest.description,
                    "seconds": seconds,
                    "megabytesPerSecond": Double(loaded.report.fileByteCount) / max(seconds, 1e-9) / 1e6,
                    "tail": TailJSON.json(loaded.report.tail),
                    "missingTransactionIDs": loaded.missingTransactionIDs,
                    "anomalies": issues,
                    "undecidedSaveAcrossStores": loaded.undecidedPart?.json ?? NSNull(),
                ])
            } else {
                print(
                    "replayed     \(loaded.appliedTransactionCount) transactions, up to \(loaded.graph.lastTransactionID)"
                )
                print("objects      \(loaded.graph.objectCount)")
                print("state digest \(digest)")
                print(
                    "time         \(Formatting.decimal(seconds, digits: 3)) s, "
                        + "\(Formatting.decimal(Double(loaded.report.fileByteCount) / max(seconds, 1e-9) / 1e6, digits: 1)) MB/s"
                )
                print("tail         \(StoreSummary(loaded).tailText)")
                if let part = loaded.undecidedPart { print("undecided    \(part.text)") }
                for issue in issues.prefix(20) { print("anomaly      \(issue)") }
            }
        }
    }
}

/// Prints changesets as text blocks or JSON lines.
struct ChangesetPrinter {
    let json: Bool
    let storeUUID: LogUUID

    func print(_ changeset: Changeset, graph: LogGraph) {
        let renderer = ChangesetRenderer(graph: graph, storeUUID: storeUUID)
        if json {
            JSONOutput.print(renderer.json(changeset), pretty: false)
            return
        }
        Swift.print(
            "transaction \(changeset.transactionID)  \(Date(commitTimeMicroseconds: changeset.commitTimeMicroseconds).iso8601Text)"
                + (changeset.author.isEmpty ? "" : "  by \(changeset.author)"))
        for line in renderer.lines(changeset) { Swift.print("  " + line) }
    }
}
