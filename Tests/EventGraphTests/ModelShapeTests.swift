import EventGraph
import Foundation
import LogFormat
import Testing

@Suite("A store reopens in a new process")
struct ProcessRestartTests {
    /// `dynamic`: an attribute of every type whose default is computed per object (`Date()`, `UUID()`, random
    /// numbers); `photos`: the PhotoLocations example, whose `Event.timeStamp` defaults to `Date()`.
    @Test(arguments: ["dynamic", "photos"])
    func aStoreWrittenByOneLaunchOpensInTheNext(app: String) throws {
        let directory = TemporaryDirectory()
        let written = try StoreProbe.run("write-\(app)", path: directory.file())
        #expect(written.status == 0, "\(written.output)")
        let read = try StoreProbe.run("read-\(app)", path: directory.file())
        #expect(read.status == 0, "\(read.output)")
        #expect(read.output == written.output, "the second launch reads the values the first one wrote")
        let again = try StoreProbe.run("read-\(app)", path: directory.file())
        #expect(again.output == written.output)
    }
}

// Two declarations of one entity, as two launches of an app would declare it before and after an update.
final class ShapeNoteV1: ManagedObject {
    override class var entityName: String { "ShapeNote" }
    @Attribute var title: String = "untitled"
    @Attribute var rank: Int64 = 1
    @Attribute(.transient) var scratch: String = ""
}

final class ShapeNoteV2: ManagedObject {
    override class var entityName: String { "ShapeNote" }
    @Attribute(.indexed) var title: String = "new"
    @Attribute var rank: Int64 = 2
    @Attribute(.transient) var scratch: Int64 = 0
}

final class ShapeNoteV3: ManagedObject {
    override class var entityName: String { "ShapeNote" }
    @Attribute var title: String = "untitled"
    @Attribute var rank: Int64 = 1
    @Attribute var scratch: String = ""
}

final class ShapeShelf: ManagedObject {
    @Attribute var label: String = ""
    @Relationship(inverse: "shelf") var books: Set<ShapeBook>
}

final class ShapeBook: ManagedObject {
    @Attribute var title: String = ""
    @Relationship var shelf: ShapeShelf?
}

@Suite("The model hash covers only the persistent shape")
struct ModelShapeTests {
    @Test func theOrderOfTheClassesDoesNotMatter() throws {
        let directory = TemporaryDirectory()
        let first = try ObjectModel(types: [ShapeShelf.self, ShapeBook.self])
        let second = try ObjectModel(types: [ShapeBook.self, ShapeShelf.self])
        #expect(first.hash == second.hash)
        do {
            let container = try ModelContainer(path: directory.file(), model: first)
            let context = container.newBackgroundContext()
            let shelf = ShapeShelf()
            context.insert(shelf)
            shelf.label = "A"
            let book = ShapeBook()
            context.insert(book)
            book.title = "Dune"
            book.shelf = shelf
            try context.save()
            try container.close()
        }
        let container = try ModelContainer(path: directory.file(), model: second)
        let context = container.newBackgroundContext()
        let book = try #require(try context.fetch(FetchDescriptor<ShapeBook>()).first)
        #expect(book.title == "Dune")
        #expect(book.shelf?.label == "A")
        #expect(book.shelf?.books.map(\.title) == ["Dune"])
        let another = ShapeBook()
        context.insert(another)
        another.shelf = book.shelf
        try context.save()
        try container.close()
        let reopened = try ModelContainer(path: directory.file(), model: first)
        let reopenedContext = reopened.newBackgroundContext()
        let shelves = try reopenedContext.fetch(FetchDescriptor<ShapeShelf>())
        #expect(shelves.map(\.books.count) == [2])
        try reopened.close()
    }

    @Test func aNewDefaultOrIndexOpensWithoutMigrationAndIsRecorded() throws {
        let directory = TemporaryDirectory()
        let v1 = try ObjectModel(name: "Notes", version: "1", types: [ShapeNoteV1.self])
        let v2 = try ObjectModel(name: "Notes", version: "1", types: [ShapeNoteV2.self])
        #expect(v1.hash == v2.hash, "defaults, indexes and transient attributes are not part of the shape")
        do {
            let container = try ModelContainer(path: directory.file(), model: v1)
            let context = container.newBackgroundContext()
            context.insert(ShapeNoteV1())  // records neither title nor rank: both are v1's defaults
            try context.save()
            try container.close()
        }
        let container = try ModelContainer(path: directory.file(), model: v2)
        let context = container.newBackgroundContext()
        let old = try #require(try context.fetch(FetchDescriptor<ShapeNoteV2>()).first)
        #expect(old.title == "untitled", "an object keeps the default in force when it was written")
        #expect(old.rank == 1)
        context.insert(ShapeNoteV2())
        try context.save()
        let titles = try context.fetch(
            FetchDescriptor<ShapeNoteV2>(predicate: #Predicate { $0.title == "new" }))
        #expect(titles.map(\.rank) == [2], "the new index finds the object inserted with the new defaults")
        let digest = try container.stateDigest()
        try container.close()

        var schemas: [SchemaPayload] = []
        var graph = LogGraph()
        try LogReader(path: directory.file()).scan { record in
            if case .schema(let schema, _) = record { schemas.append(schema) }
            try graph.apply(record)
        }
        #expect(schemas == [v1.schema, v2.schema], "the log records the new model after the old one")
        #expect(graph.digest() == digest, "a tool replaying the log resolves each default against its own schema")

        let reopened = try ModelContainer(path: directory.file(), model: v2)
        let reopenedContext = reopened.newBackgroundContext()
        let notes = try reopenedContext.fetch(FetchDescriptor<ShapeNoteV2>())
        #expect(notes.map(\.title).sorted() == ["new", "untitled"])
        try reopened.close()
        var count = 0
        try LogReader(path: directory.file()).scan { if case .schema = $0 { count += 1 } }
        #expect(count == 2, "an unchanged model is not recorded again")
    }

    @Test func aStoreRecordedWithAnotherHashDefinitionOpens() throws {
        let directory = TemporaryDirectory()
        let model = try ObjectModel(name: "Notes", version: "1", types: [ShapeNoteV1.self])
        var recorded = model.schema
        recorded.modelHash = 0x0123_4567_89AB_CDEF  // what an older release computed over the whole schema
        let writer = try LogWriter(path: directory.file())
        try writer.append(schema: recorded)
        try writer.close()
        let container = try ModelContainer(path: directory.file(), model: model)
        #expect(container.model.hash == model.hash)
        try container.close()
    }

    @Test func aChangedShapeIsStillRefused() throws {
        let directory = TemporaryDirectory()
        let v1 = try ObjectModel(types: [ShapeNoteV1.self])
        let persistentScratch = try ObjectModel(types: [ShapeNoteV3.self])
        #expect(v1.hash != persistentScratch.hash)
        try ModelContainer(path: directory.file(), model: v1).close()
        // Opening migrates by default (issue 11); with migration turned off the changed shape is a mismatch.
        var never = ModelContainer.Configuration()
        never.migration = .never
        #expect {
            try ModelContainer(path: directory.file(), model: persistentScratch, configuration: never)
        } throws: { error in
            (error as? EventGraphError)?.code == .modelMismatch
        }
    }
}
