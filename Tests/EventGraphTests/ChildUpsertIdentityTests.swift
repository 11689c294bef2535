import Foundation
import Testing

@testable import EventGraph

/// A worker's find-or-create inserts a course that another context commits first: the root's save turns the insert
/// into an update of the committed course. Main and the worker (a grandchild of the root) must then hold their
/// objects by the committed course's ID; they kept an ID the store never had.
@Suite("An upsert's committed identity reaches the children and grandchildren")
struct ChildUpsertIdentityTests {
    enum Holder: String, CaseIterable {
        case main, worker
    }

    /// Another context commits a course SE9 (7 credits) and returns it.
    static func commitSE9(in container: ModelContainer) throws -> Course {
        let other = container.newBackgroundContext(name: "other")
        let committed = Course()
        other.insert(committed)
        committed.code = "SE9"
        committed.credits = 7
        try other.save()
        return committed
    }

    @Test(arguments: Holder.allCases) func theCourseIsTheCommittedOne(holder: Holder) throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let root = container.newBackgroundContext(name: "root")
        let main = root.makeChildContext(name: "main")
        let worker = main.makeChildContext(name: "worker")
        let imported = try worker.fetchOrInsert(Course.self, unique: \.code, equals: "SE9") { $0.credits = 3 }
        let lesson = Lesson()
        worker.insert(lesson)
        lesson.title = "intro"
        lesson.course = imported
        try worker.save()
        try main.save()

        // Another context commits SE9 first.
        let committed = try Self.commitSE9(in: container)
        try root.save()

        let context = holder == .main ? main : worker
        let course = try #require(
            try context.fetch(FetchDescriptor<Course>(predicate: #Predicate { $0.code == "SE9" })).first)
        #expect(course.objectID == committed.objectID)
        #expect(!course.objectID.isTemporary)
        #expect(course.credits == 3, "the import's values overwrite the committed course's")
        if holder == .worker {
            #expect(course === imported, "one object per ID: the worker's own course, renamed")
            #expect(lesson.course === imported)
        }
        let reader = container.newBackgroundContext(name: "reader")
        let read = try #require(reader.object(with: course.objectID) as? Course)
        #expect(read.lessons.map(\.title) == ["intro"])
    }
}

/// A results controller holds its results by identity (which also breaks ties in its order): when a root's save
/// merges an upserted course into the committed one, the controller of the root, Main or the worker kept the course
/// under the identity the store never had, and met it a second time under the committed one.
@Suite("A results controller follows an upsert's committed identity")
struct ChildUpsertResultsControllerTests {
    enum Holder: String, CaseIterable {
        case root, main, worker
    }

    @Test(arguments: Holder.allCases, [false, true])
    func theControllerHoldsTheCourseOnceUnderItsCommittedID(holder: Holder, seesTheOtherSaveFirst: Bool) throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let root = container.newBackgroundContext(name: "root")
        let main = root.makeChildContext(name: "main")
        let worker = main.makeChildContext(name: "worker")
        let context = [Holder.root: root, .main: main, .worker: worker][holder]!
        let controller = try FetchedResultsController(
            FetchDescriptor<Course>(sortBy: [SortDescriptor(\.code)]), in: context)
        let imported = try worker.fetchOrInsert(Course.self, unique: \.code, equals: "SE9") { $0.credits = 3 }
        try worker.save()
        try main.save()
        try controller.processPendingChanges()
        #expect(controller.fetchedObjects.count == 1)

        let committed = try ChildUpsertIdentityTests.commitSE9(in: container)
        if seesTheOtherSaveFirst {
            // The store's SE9 and the context's unsaved one are two results until the root saves.
            try controller.processPendingChanges()
            #expect(controller.fetchedObjects.count == 2)
        }
        let before = controller.objectIDs
        try root.save()
        let difference = try controller.processPendingChanges()

        #expect(controller.fetchedObjects.map(\.objectID) == [committed.objectID])
        #expect(difference.applied(to: before) == controller.objectIDs, "\(difference)")
        let refetched = try context.fetch(FetchDescriptor<Course>(sortBy: [SortDescriptor(\.code)]))
        #expect(controller.fetchedObjects.map(\.objectID) == refetched.map(\.objectID))
        #expect(controller.fetchedObjects.allSatisfy { $0.credits == 3 })
        if holder == .worker {
            #expect(controller.fetchedObjects.first === imported)
            #expect(controller.indexPath(of: imported) == ResultsIndexPath(section: 0, row: 0))
        }
        // Later changes of the course still find it.
        let writer = container.newBackgroundContext(name: "writer")
        let course = try #require(writer.object(with: committed.objectID) as? Course)
        course.code = "SE10"
        try writer.save()
        if holder != .root { context.refreshAllObjects() }
        let last = try controller.processPendingChanges()
        #expect(controller.fetchedObjects.map(\.objectID) == [committed.objectID])
        #expect(last.deletedRows.isEmpty && last.insertedRows.isEmpty)
    }
}
