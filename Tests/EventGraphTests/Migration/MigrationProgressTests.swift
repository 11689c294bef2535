import EventGraph
import Foundation
import LogFormat
import Testing

@Suite("Migration progress: transactions and bytes done of the old log's total")
struct MigrationProgressTests {
    @Test(arguments: [false, true])
    func progressCoversEveryTransactionInOrder(isDryRun: Bool) throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let last = try writeLibraryV1(at: path)
        let byteCount = directory.byteCount()
        let seen = LockedValue<[StoreMigration.Progress]>([])
        let options = StoreMigration.Options { progress in seen.withLock { $0.append(progress) } }
        let report =
            isDryRun
            ? try StoreMigration.dryRun(path: path, to: LibraryV2.model, options: options)
            : try StoreMigration.migrate(path: path, to: LibraryV2.model, options: options)
        let events = seen.withLock { $0 }
        #expect(events.map(\.transactionCount) == Array(1...Int(last)))
        #expect(report.transactionCount == Int(last))
        // The total is the log's size when the replay starts (opening it to migrate may append a seal frame).
        let total = try #require(events.first?.byteCount)
        #expect(total >= byteCount)
        #expect(events.allSatisfy { $0.byteCount == total && $0.byteOffset < total })
        #expect(zip(events, events.dropFirst()).allSatisfy { $0.byteOffset < $1.byteOffset })
    }
}
