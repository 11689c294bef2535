import ArgumentParser
import LogFormat

/// `egctl salvage STORE --output NEW [--json]`
struct SalvageCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "salvage",
        abstract: "Copy every verifiable transaction of a damaged store into a new store, and report what was lost.",
        discussion: """
            Reads <store> without modifying it. The new store keeps the store UUID and the transaction IDs, so the \
            lost transactions are exactly the gaps listed.

            Example:
              egctl salvage broken.eglog --output repaired.eglog
            """)

    @OptionGroup var store: StoreArgument
    @Option(name: .shortAndLong, help: "Path of the new store to write (must not exist).")
    var output: String
    @Flag(name: .long, help: "Print the report as JSON.")
    var json = false

    func run() throws {
        try Failure.guarding {
            let report = try Salvage.salvage(path: store.store, to: output)
            let lost = report.lostRegions.map { region -> [String: Any] in
                var object: [String: Any] = [
                    "byteOffset": region.byteOffset, "byteCount": region.byteCount, "reason": region.reason,
                    "afterTransactionID": region.afterTransactionID,
                ]
                if let range = region.transactionIDs {
                    object["lostTransactions"] = ["first": range.lowerBound, "last": range.upperBound]
                }
                return object
            }
            if json {
                JSONOutput.print([
                    "output": output, "copiedTransactions": report.copiedTransactionCount,
                    "copiedCheckpoint": report.copiedCheckpoint, "lastTransactionID": report.lastTransactionID,
                    "outputByteCount": report.outputByteCount, "lost": lost, "complete": report.isComplete,
                ])
                return
            }
            print(
                "copied       \(report.copiedTransactionCount) transactions"
                    + (report.copiedCheckpoint ? " and a checkpoint" : "") + ", last \(report.lastTransactionID)")
            print("wrote        \(output) (\(Formatting.bytes(report.outputByteCount)))")
            if report.isComplete { print("lost         nothing") }
            for region in report.lostRegions {
                var line =
                    "lost         bytes \(region.byteOffset)..<\(region.byteOffset + region.byteCount) (\(region.reason))"
                if let range = region.transactionIDs {
                    line += ": transactions \(range.lowerBound)…\(range.upperBound)"
                } else if region.nextTransactionID == nil {
                    line += ": every transaction after \(region.afterTransactionID) in that region"
                }
                print(line)
            }
        }
    }
}
