import Foundation
import Testing

@testable import EventGraph

/// Seed 002 (LCDDataSource): a private Root writer, a Main context for the UI as its child, and a Worker per data
/// source as Main's child that imports objects, is merged into Main, and Root saves them to the log.
@Suite("Seed 002's Root → Main → Worker stack")
struct ChildContextStackTests {
    @Test func aWorkerImportIsPushedUpSavedAndVisibleFromAFreshContainer() throws {
        let directory = TemporaryDirectory()
        let ids: [ObjectID]
        do {
            let container = try ModelContainer(path: directory.file(), model: TestModels.school)
            let root = container.newBackgroundContext(name: "root")
            let main = root.makeChildContext(name: "main")
            let worker = main.makeChildContext(name: "worker")
            let before = container.lastTransactionID

            // The import: find-or-create by code, so a course met twice in the feed is one object.
            for (code, title) in [("SE1", "intro"), ("SE2", "design"), ("SE1", "testing")] {
                let course = try worker.fetchOrInsert(Course.self, unique: \.code, equals: code)
                let lesson = Lesson()
                worker.insert(lesson)
                lesson.title = title
                lesson.course = course
            }
            #expect(try main.fetchCount(FetchDescriptor<Course>()) == 0, "Main sees nothing before the merge")
            try worker.save()
            #expect(try main.fetchCount(FetchDescriptor<Course>()) == 2)
            #expect(try main.fetchCount(FetchDescriptor<Lesson>()) == 3)
            try main.save()
            #expect(container.lastTransactionID == before, "only Root's save reaches the log")
            try root.save()
            #expect(container.lastTransactionID == before + 1)

            let courses = try main.fetch(FetchDescriptor<Course>(sortBy: [SortDescriptor(\.code)]))
            #expect(courses.map(\.code) == ["SE1", "SE2"])
            #expect(courses.allSatisfy { !$0.objectID.isTemporary })
            ids = courses.map(\.objectID)
            try container.close()
        }
        let reopened = try ModelContainer(path: directory.file(), model: TestModels.school)
        let reader = reopened.newBackgroundContext()
        let courses = ids.compactMap { reader.object(with: $0) as? Course }
        #expect(courses.map(\.code) == ["SE1", "SE2"])
        #expect(courses.map { Set($0.lessons.map(\.title)) } == [["intro", "testing"], ["design"]])
        try reopened.close()
    }
}
