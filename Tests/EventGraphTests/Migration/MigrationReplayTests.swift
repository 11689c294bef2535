import EventGraph
import Foundation
import Testing

@Suite("Migration replays the old log into a new one")
struct MigrationReplayTests {
    @Test func renamedWidenedAndAddedPropertiesKeepValuesAndHistory() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let last = try writeLibraryV1(at: path)
        let report = try StoreMigration.migrate(path: path, to: LibraryV2.model)
        #expect(report.transactionCount == Int(last))
        #expect(report.backupPath == StoreMigration.backupPath(for: path))
        #expect(report.changes.contains { $0.kind == .entityRenamed && $0.entityName == "Bookcase" })

        let container = try ModelContainer(
            path: path, model: LibraryV2.model, configuration: .init(recoveryHandler: nil))
        #expect(container.lastTransactionID == last)
        let context = container.newBackgroundContext()
        let books = try context.fetch(FetchDescriptor<LibraryV2.Book>(sortBy: [SortDescriptor(\.pages)]))
        #expect(books.count == 9)
        #expect(books.map(\.name).first == "retitled")
        #expect(books.map(\.pages) == [100] + (102..<110).map(Int64.init))
        #expect(books.allSatisfy { $0.language == "en" })
        #expect(books.first?.weight == 0.5)
        #expect(books.first?.shelf?.tag == "shelf 0")
        let shelves = try context.fetch(FetchDescriptor<LibraryV2.Bookcase>())
        #expect(shelves.map { $0.books.count }.sorted() == [2, 3, 4])
        // History survives: the state as of the first book's save, under the new model.
        let view = try container.view(asOfTransaction: 2)
        let early = try view.newBackgroundContext().fetch(FetchDescriptor<LibraryV2.Book>())
        #expect(early.map(\.name) == ["book 0"])
        try container.close()
    }

    @Test func liveStateMigrationDropsHistoryButKeepsTheState() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let last = try writeLibraryV1(at: path)
        let options = StoreMigration.Options(historyMode: .liveState)
        let report = try StoreMigration.migrate(path: path, to: LibraryV2.model, options: options)
        let container = try ModelContainer(
            path: path, model: LibraryV2.model, configuration: .init(recoveryHandler: nil))
        #expect(container.lastTransactionID == last)
        #expect(try container.stateDigest() == report.stateDigest)
        let books = try container.newBackgroundContext().fetch(FetchDescriptor<LibraryV2.Book>())
        #expect(books.count == 9)
        #expect(throws: EventGraphError.self) { try container.view(asOfTransaction: 2) }
        try container.close()
    }

    @Test func aCompactedStoreMigratesItsCheckpoint() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try writeLibraryV1(at: path)
        do {
            let container = try ModelContainer(path: path, model: LibraryV1.model)
            try container.compact()
            let context = container.newBackgroundContext()
            let book = LibraryV1.Book()
            context.insert(book)
            book.title = "after compaction"
            try context.save()
            try container.close()
        }
        let report = try StoreMigration.migrate(path: path, to: LibraryV2.model)
        let container = try ModelContainer(
            path: path, model: LibraryV2.model, configuration: .init(recoveryHandler: nil))
        #expect(try container.stateDigest() == report.stateDigest)
        let books = try container.newBackgroundContext().fetch(FetchDescriptor<LibraryV2.Book>())
        #expect(books.count == 10)
        #expect(books.contains { $0.name == "after compaction" && $0.language == "en" && $0.pages == 0 })
        try container.close()
    }

    @Test func openingWithANewModelMigratesByInferenceUnlessTurnedOff() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try writeLibraryV1(at: path)
        var never = ModelContainer.Configuration(recoveryHandler: nil)
        never.migration = .never
        #expect(throws: EventGraphError.self) {
            try ModelContainer(path: path, model: LibraryV2.model, configuration: never)
        }
        let container = try ModelContainer(
            path: path, model: LibraryV2.model, configuration: .init(recoveryHandler: nil))
        #expect(try container.newBackgroundContext().fetch(FetchDescriptor<LibraryV2.Book>()).count == 9)
        try container.close()
        #expect(FileManager.default.fileExists(atPath: StoreMigration.backupPath(for: path)))
    }

    @Test func aStoreAlreadyAtTheTargetIsLeftAlone() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try writeLibraryV1(at: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let report = try StoreMigration.migrate(path: path, to: LibraryV1.model)
        #expect(report.isUpToDate)
        #expect(report.description.contains("nothing to migrate"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func aDryRunReportsWithoutWriting() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let last = try writeLibraryV1(at: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let report = try StoreMigration.dryRun(path: path, to: LibraryV2.model)
        #expect(report.isDryRun)
        #expect(report.transactionCount == Int(last))
        #expect(report.affectedTransactionCount > 0)
        #expect(report.objectCounts == ["Book": 9, "Bookcase": 3, "Reader": 0])
        #expect(report.targetByteCount > 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(!FileManager.default.fileExists(atPath: StoreMigration.backupPath(for: path)))
    }

    @Test func duplicatesUnderANewUniquenessConstraintRefuseTheMigration() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try writeLibraryV1(at: path, duplicateISBN: true)
        let dryRun = try StoreMigration.dryRun(path: path, to: LibraryUniqueISBN.model)
        #expect(dryRun.uniquenessFailures.count == 1)
        let before = try ModelContainer.view(path: path, model: LibraryV1.model).stateDigest()
        let error = try #require(throws: EventGraphError.self) {
            try StoreMigration.migrate(path: path, to: LibraryUniqueISBN.model)
        }
        #expect(error.code == .uniqueness)
        #expect(error.failures.first?.propertyName == "isbn")
        #expect(error.description.contains("2 objects (keys 6, 7) share isbn = \"same\""))
        #expect(!FileManager.default.fileExists(atPath: StoreMigration.backupPath(for: path)))
        let old = try ModelContainer(path: path, model: LibraryV1.model, configuration: .init(recoveryHandler: nil))
        #expect(try old.stateDigest() == before)
        try old.close()
    }

    @Test func aStoreOpenForWritingIsNotMigrated() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try writeLibraryV1(at: path)
        let open = try ModelContainer(path: path, model: LibraryV1.model)
        let error = try #require(throws: EventGraphError.self) {
            try StoreMigration.migrate(path: path, to: LibraryV2.model)
        }
        #expect(error.description.contains("already open for writing"))
        try open.close()
    }
}
