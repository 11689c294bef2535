import ArgumentParser
import EventGraph
import Foundation

/// `egctl migrate STORE --model NEW [--dry-run] [--live-state] [--json]`, `egctl migrate STORE --rollback`
struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Migrate a store to a new model by inferred mapping, or roll a migration back.",
        discussion: """
            Replays every transaction of the store through the mapping from its recorded model to the model \
            recorded in --model (a store created by the new version of the app) into a new log beside it, \
            verifies it, and swaps it in; the old log is kept as <store>.premigration until --rollback restores it. \
            Transaction IDs, commit times and authors are kept, so history works across the migration. Renames \
            are inferred from the original names the new model's store records. On a terminal, a progress line \
            shows how much of the old log has been replayed.

            --dry-run also lists the existing objects that break a rule the new model's store records (a required \
            relationship left empty, a to-many count out of bounds): per entity, property and rule, how many and \
            the first few. A migration keeps them; their next save fails until they are fixed. Ranges, lengths \
            and patterns are not recorded in a store, so only the app's own model (StoreMigration.dryRun) checks \
            them.

            Examples:
              egctl migrate photos.eglog --model empty-v2.eglog --dry-run
              egctl migrate photos.eglog --model empty-v2.eglog
              egctl migrate photos.eglog --rollback
            """)

    @OptionGroup var store: StoreArgument
    @OptionGroup var output: OutputOptions
    @Option(help: "A store whose recorded model is the target.")
    var model: String?
    @Flag(help: "Report what would change, without writing.")
    var dryRun = false
    @Flag(help: "Keep only the live state (a checkpoint), not the history.")
    var liveState = false
    @Flag(help: "Restore the log the last migration replaced.")
    var rollback = false
    @Flag(help: "With --rollback: drop transactions committed after the migration.")
    var discardLaterTransactions = false

    func validate() throws {
        guard rollback != (model != nil) else {
            throw ValidationError("give either --model NEW (migrate) or --rollback")
        }
    }

    func run() throws {
        try Failure.guarding {
            if rollback {
                let report = try StoreMigration.rollback(
                    path: store.store, discardingLaterTransactions: discardLaterTransactions)
                if output.json {
                    JSONOutput.print([
                        "path": store.store, "restoredModel": report.restoredModel,
                        "lastTransactionID": report.lastTransactionID,
                        "discardedTransactionCount": report.discardedTransactionCount,
                        "migratedLogPath": report.migratedLogPath,
                    ])
                } else {
                    print(report)
                }
                return
            }
            let target = try StoreMigration.recordedModel(path: model!)
            let size = (try? FileManager.default.attributesOfItem(atPath: store.store)[.size] as? UInt64) ?? 0
            let progress = Progress(dryRun ? "migrate (dry run)" : "migrate", totalByteCount: size)
            let options = StoreMigration.Options(historyMode: liveState ? .liveState : .full) {
                progress.update(byteOffset: $0.byteOffset)
            }
            let report: StoreMigration.Report
            do {
                // The line is cleared before the report (or the error) is printed.
                defer { progress.finish() }
                report =
                    dryRun
                    ? try StoreMigration.dryRun(path: store.store, to: target, options: options)
                    : try StoreMigration.migrate(path: store.store, to: target, options: options)
            }
            if output.json {
                var object: [String: Any] = [
                    "path": store.store, "sourceModel": report.sourceModel, "targetModel": report.targetModel,
                    "isUpToDate": report.isUpToDate, "isDryRun": report.isDryRun,
                    "transactionCount": report.transactionCount,
                    "affectedTransactionCount": report.affectedTransactionCount, "objectCounts": report.objectCounts,
                    "changes": report.changes.map {
                        [
                            "kind": $0.kind.rawValue, "entity": $0.entityName, "property": $0.propertyName ?? "",
                            "detail": $0.detail,
                        ]
                    },
                    "uniquenessFailures": report.uniquenessFailures.map(\.description),
                    "validationFailures": report.validationFailures.map {
                        [
                            "entity": $0.entityName, "property": $0.propertyName, "rule": $0.rule.rawValue,
                            "objectCount": $0.objectCount,
                            "examples": $0.examples.map { ["object": $0.objectID.uriString, "message": $0.message] },
                        ] as [String: Any]
                    },
                    "sourceByteCount": report.sourceByteCount, "targetByteCount": report.targetByteCount,
                ]
                if let digest = report.stateDigest { object["stateDigest"] = digest.description }
                if let backup = report.backupPath { object["backupPath"] = backup }
                JSONOutput.print(object)
            } else {
                print(report)
            }
        }
    }
}
