import EventGraph
import Foundation
import Testing

@Suite("Migration plans: v1 → v2 → v3 in one pass")
struct MigrationPlanTests {
    @Test func aPlanRunsEveryInferredStepInOnePass() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let last = try writeLibraryV1(at: path)
        let versions = [LibraryV1.model, LibraryV2.model, LibraryV3.model]
        var options = StoreMigration.Options()
        options.computesStateDigest = true
        let report = try StoreMigration.migrate(path: path, through: versions, options: options)
        #expect(report.targetModel == "Library version 3")
        #expect(report.changes.contains { $0.description == "Book.displayName: renamed from name" })
        let container = try ModelContainer(
            path: path, model: LibraryV3.model, configuration: .init(recoveryHandler: nil))
        #expect(container.lastTransactionID == last)
        let books = try container.newBackgroundContext().fetch(
            FetchDescriptor<LibraryV3.Book>(sortBy: [SortDescriptor(\.pages)]))
        #expect(books.first?.displayName == "retitled")
        // Version 2 gave every existing book "en"; version 3's new default applies only to new books.
        #expect(books.allSatisfy { $0.language == "en" })
        #expect(try container.stateDigest() == report.stateDigest)
        try container.close()
        // A second run finds the store at the plan's last version.
        #expect(try StoreMigration.migrate(path: path, through: versions).isUpToDate)
    }

    @Test func aStoreWhoseModelIsNotInThePlanIsRefused() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try writeLibraryV1(at: path)
        let error = try #require(throws: EventGraphError.self) {
            try StoreMigration.migrate(path: path, through: [LibraryV2.model, LibraryV3.model])
        }
        #expect(error.message.contains("none of the plan's versions (2, 3)"))
    }
}
