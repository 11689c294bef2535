import ArgumentParser
import EventGraph
import LogFormat

/// `egctl verify STORE [--json]`
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check everything: header, checksums, sequence numbers, every payload, and the replayed graph.",
        discussion: """
            Graph checks: inverses agree, references within the store point at live objects, uniqueness constraints \
            hold, and replay found nothing inconsistent.

            Exit status: 0 when everything committed is intact (a torn, never-synced tail is reported as such, not as \
            damage); 1 when damage is found (with byte offset and affected transactions); 2 for usage errors or a \
            file that is not a store.

            Examples:
              egctl verify blog.eglog
              egctl verify blog.eglog --json || echo "damaged"
            """)

    @OptionGroup var store: StoreArgument
    @OptionGroup var output: OutputOptions

    func run() throws {
        try Failure.guarding {
            let started = Progress.now()
            let loaded = try StoreLoader.load(store.store, label: "verify")
            let seconds = Double(Progress.now() - started) / 1e9
            let issues = loaded.graph.integrityIssues()
            let report = loaded.report
            var damaged = !issues.isEmpty
            if case .damaged = report.tail { damaged = true }
            if report.headerCopyDamaged { damaged = true }
            if output.json {
                JSONOutput.print([
                    "path": store.store,
                    "intact": !damaged,
                    "frames": report.frameCount,
                    "transactions": report.transactionCount,
                    "lastTransactionID": report.lastTransactionID,
                    "objectCount": loaded.graph.objectCount,
                    "stateDigest": loaded.graph.digest().description,
                    "headerCopyDamaged": report.headerCopyDamaged,
                    "tail": TailJSON.json(report.tail),
                    "missingTransactionIDs": loaded.missingTransactionIDs,
                    "issues": issues.map { ["kind": $0.kind.rawValue, "message": $0.message] },
                    "seconds": seconds,
                ])
            } else {
                print("frames       \(report.frameCount) verified (\(Formatting.bytes(report.committedByteCount)))")
                print("transactions \(report.transactionCount), last \(report.lastTransactionID)")
                print("objects      \(loaded.graph.objectCount)")
                print(
                    "header       \(report.headerCopyDamaged ? "one copy DAMAGED (the other copy was used)" : "both copies intact")"
                )
                print("tail         \(StoreSummary(loaded).tailText)")
                if !loaded.missingTransactionIDs.isEmpty {
                    // Not damage: the transactions a salvage could not read were left out, and the store opens.
                    print(
                        "gaps         transaction IDs missing: \(loaded.missingTransactionIDs.joined(separator: ", ")) "
                            + "(left out by a salvage)")
                }
                if issues.isEmpty {
                    print("graph        intact (inverses, references, uniqueness)")
                } else {
                    for issue in issues { print("graph        \(issue)") }
                }
                print(damaged ? "result       DAMAGED" : "result       intact")
            }
            if damaged { throw ExitStatus.damage }
        }
    }
}
