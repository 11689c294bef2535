import EventGraphExamples
import Foundation
import LogFormat
import Testing

@testable import EventGraph

@Suite("Migration verifies the new log by what it was handed, without replaying it")
struct MigrationVerificationTests {
    /// A writer handed other values than the mapping produced (here: every string the mapping wrote replaced, in
    /// payloads that still decode) must fail the migration and leave the old store as it was.
    @Test func aLogThatDoesNotHoldTheMappedTransactionsFailsTheMigration() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let last = try writeLibraryV1(at: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        var options = StoreMigration.Options()
        options.replacePayload = { _, payload in
            guard var changeset = try? Changeset(decoding: payload) else { return payload }
            changeset.operations = changeset.operations.map(Self.retitled)
            return (try? changeset.encoded()) ?? payload
        }
        let error = try #require(throws: EventGraphError.self) {
            try StoreMigration.migrate(path: path, to: LibraryV2.model, options: options)
        }
        #expect(error.code == .log)
        #expect(error.message.contains("does not verify"), "\(error.message)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(before.count) == before)
        #expect(!FileManager.default.fileExists(atPath: StoreMigration.backupPath(for: path)))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.contains("rewrite")
        }
        #expect(leftovers.isEmpty, "the temporary log is removed")
        var never = ModelContainer.Configuration(recoveryHandler: nil)
        never.migration = .never
        let old = try ModelContainer(path: path, model: LibraryV1.model, configuration: never)
        #expect(old.lastTransactionID == last)
        try old.close()
    }

    /// Every string value of an operation replaced (a wrong mapping that still encodes a valid changeset).
    private static func retitled(_ operation: ChangeOperation) -> ChangeOperation {
        func changed(_ changes: [PropertyChange]) -> [PropertyChange] {
            changes.map { change in
                guard case .attribute(.string) = change.value else { return change }
                return PropertyChange(propertyIndex: change.propertyIndex, value: .attribute(.string("wrong")))
            }
        }
        switch operation {
        case .insert(let object, let changes): return .insert(object, changed(changes))
        case .update(let object, let changes): return .update(object, changed(changes))
        default: return operation
        }
    }

    /// A dry run streams the log without building the new state, yet counts what a migration finds — for a store
    /// with history only and for a compacted one (whose checkpoint the migration writes again from the state).
    @Test(arguments: [false, true])
    func aDryRunCountsWhatTheMigrationFinds(compacted: Bool) throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try writeLibraryV1(at: path)
        if compacted {
            let container = try ModelContainer(path: path, model: LibraryV1.model)
            try container.compact()
            let context = container.newBackgroundContext()
            context.delete(try #require(try context.fetch(FetchDescriptor<LibraryV1.Book>()).first))
            context.insert(LibraryV1.Shelf())
            try context.save()
            try container.close()
        }
        let dryRun = try StoreMigration.dryRun(path: path, to: LibraryV2.model)
        let migration = try StoreMigration.migrate(path: path, to: LibraryV2.model)
        #expect(dryRun.objectCounts == migration.objectCounts)
        #expect(dryRun.objectCounts["Book"] == (compacted ? 8 : 9))
        #expect(dryRun.objectCounts["Bookcase"] == (compacted ? 4 : 3))
        #expect(dryRun.transactionCount == migration.transactionCount)
        #expect(dryRun.affectedTransactionCount == migration.affectedTransactionCount)
        #expect(dryRun.targetByteCount > 0)
    }

    /// A dry run under a new uniqueness constraint still lists the duplicates (it builds the values it needs).
    @Test func aDryRunListsDuplicatesUnderANewUniquenessConstraint() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try writeLibraryV1(at: path, duplicateISBN: true)
        let report = try StoreMigration.dryRun(path: path, to: LibraryUniqueISBN.model)
        let failure = try #require(report.uniquenessFailures.first)
        #expect(failure.entityName == "Book")
        #expect(failure.propertyName == "isbn")
    }
}
