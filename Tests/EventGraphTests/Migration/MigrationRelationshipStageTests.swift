import EventGraph
import Foundation
import Testing

@Suite("Custom migration stages read old relationships and relate new objects")
struct MigrationRelationshipStageTests {
    /// The migrated store's state: every post with its author, editor, tags and text, both sides of each.
    private func expectFinalState(_ context: ObjectContext) throws {
        let posts = try context.fetch(FetchDescriptor<WritingV2.Post>(sortBy: [SortDescriptor(\.title)]))
        #expect(posts.map(\.title) == ["post 0", "post 1"])
        #expect(posts.map { $0.author?.name } == ["bob", "cy"])
        #expect(posts.map { $0.editor?.name } == ["bob", "cy"])
        #expect(posts.map(\.tagCount) == [3, 1])
        #expect(posts.map { $0.tags.map(\.label).sorted() } == [["a", "b", "c"], ["c"]])
        #expect(posts.map { $0.text?.body } == ["body 0", "edited"])
        #expect(posts.allSatisfy { $0.text?.post === $0 && $0.text?.writer === $0.author })

        let authors = try context.fetch(FetchDescriptor<WritingV2.Author>(sortBy: [SortDescriptor(\.name)]))
        #expect(authors.map(\.name) == ["ann", "bob", "cy"])
        #expect(authors.map { $0.posts.map(\.title).sorted() } == [[], ["post 0"], ["post 1"]])
        #expect(authors.map { $0.edited.map(\.title).sorted() } == [[], ["post 0"], ["post 1"]])
        #expect(authors.map { $0.texts.map(\.body).sorted() } == [[], ["body 0"], ["edited"]])
        // The deleted post's text went with it, and left its writer.
        #expect(try context.fetch(FetchDescriptor<WritingV2.Text>()).count == 2)
    }

    /// Opens the migrated store with version 2: its last transaction, the reported digest, sound inverses and the
    /// final state.
    private func expectMigrated(_ path: String, _ store: WritingStore, _ report: StoreMigration.Report) throws {
        let container = try ModelContainer(
            path: path, model: WritingV2.model, configuration: .init(recoveryHandler: nil))
        #expect(container.lastTransactionID == store.last)
        #expect(try container.stateDigest() == report.stateDigest)
        #expect(try GraphIntegrity.issues(container) == [])
        try expectFinalState(container.newBackgroundContext())
        try container.close()
    }

    private func migrate(_ path: String, historyMode: StoreMigration.HistoryMode) throws -> StoreMigration.Report {
        var options = StoreMigration.Options(historyMode: historyMode)
        options.computesStateDigest = true
        return try StoreMigration.migrate(path: path, plan: WritingV2.plan, options: options)
    }

    @Test func everyTransactionIsMappedWithBothSidesOfEachRelationship() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let store = try WritingStore.write(at: path)
        let report = try migrate(path, historyMode: .full)
        #expect(report.transactionCount == Int(store.last))
        #expect(report.objectCounts == ["Author": 3, "Tag": 3, "Post": 2, "Text": 2])
        #expect(report.changes.contains { $0.kind == .computed && $0.description.hasPrefix("Author.texts") })
        #expect(report.changes.contains { $0.kind == .computed && $0.description.hasPrefix("Author.edited") })

        try expectMigrated(path, store, report)

        let container = try ModelContainer(
            path: path, model: WritingV2.model, configuration: .init(recoveryHandler: nil))
        // History: before post 0 moved to bob and post 2 was deleted, ann wrote and edited posts 0 and 2.
        let view = try container.view(asOfTransaction: store.early).newBackgroundContext()
        let ann = try #require(
            try view.fetch(FetchDescriptor<WritingV2.Author>()).first { $0.name == "ann" })
        #expect(ann.edited.map(\.title).sorted() == ["post 0", "post 2"])
        #expect(ann.texts.map(\.body).sorted() == ["body 0", "body 2"])
        let early = try view.fetch(FetchDescriptor<WritingV2.Post>(sortBy: [SortDescriptor(\.title)]))
        #expect(early.map(\.tagCount) == [2, 1, 0])
        #expect(early.map { $0.text?.body } == ["body 0", "body 1", "body 2"])
        try container.close()
    }

    @Test func aLiveStateMigrationWritesTheSameState() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let store = try WritingStore.write(at: path)
        try expectMigrated(path, store, try migrate(path, historyMode: .liveState))
    }

    /// The old log's checkpoint holds whole objects: the inverse values the code puts on authors, whose records
    /// the checkpoint may hold before or after the posts', are merged into the state read from it.
    @Test(arguments: [StoreMigration.HistoryMode.full, .liveState], [1, 2, 4])
    func aCheckpointInTheOldLogIsMappedWithItsInverses(historyMode: StoreMigration.HistoryMode, step: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let store = try WritingStore.write(at: path, compactingAfter: step)
        try expectMigrated(path, store, try migrate(path, historyMode: historyMode))
    }

    /// In one transaction the person with the lower key takes the desk the other leaves: the mapped transaction
    /// must leave the desk's inverse set to the taker, whichever person's operations come first.
    @Test func aOneToOneTargetChangingHandsInOneTransactionKeepsTheTaker() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        do {
            let container = try ModelContainer(path: path, model: OfficeV1.model)
            let context = container.newBackgroundContext()
            let first = OfficeV1.Person()
            let second = OfficeV1.Person()
            let desk = OfficeV1.Desk()
            context.insert(first)
            context.insert(second)
            context.insert(desk)
            first.name = "first"
            second.name = "second"
            desk.label = "window"
            second.desk = desk
            try context.save()
            first.desk = desk
            try context.save()
            #expect(second.desk == nil)
            try container.close()
        }
        try StoreMigration.migrate(path: path, plan: OfficeV2.plan)
        let container = try ModelContainer(
            path: path, model: OfficeV2.model, configuration: .init(recoveryHandler: nil))
        let context = container.newBackgroundContext()
        #expect(try GraphIntegrity.issues(container) == [])
        let desks = try context.fetch(FetchDescriptor<OfficeV2.Desk>())
        #expect(desks.map { $0.sitter?.name } == ["first"])
        let people = try context.fetch(FetchDescriptor<OfficeV2.Person>(sortBy: [SortDescriptor(\.name)]))
        #expect(people.map { $0.seat?.label } == ["window", nil])
        try container.close()
    }

    @Test func aDryRunCountsTheCreatedObjectsAndWritesNothing() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        _ = try WritingStore.write(at: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let report = try StoreMigration.dryRun(path: path, plan: WritingV2.plan)
        #expect(report.isDryRun)
        #expect(report.objectCounts == ["Author": 3, "Tag": 3, "Post": 2, "Text": 2])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }
}
