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

    @Test(arguments: Holder.allCases) func theCourseIsTheCommittedOne(holder: Holder) throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let root = container.newBackgroundContext(name: "root")
        let main = root.makeChildContext(name: "main")
        let worker = main.makeChildContext(name: "worker")
        let imported = worker.fetchOrInsert(Course.self, unique: \.code, equals: "SE9") { $0.credits = 3 }
        let lesson = Lesson()
        worker.insert(lesson)
        lesson.title = "intro"
        lesson.course = imported
        try worker.save()
        try main.save()

        // Another context commits SE9 first.
        let other = container.newBackgroundContext(name: "other")
        let committed = Course()
        other.insert(committed)
        committed.code = "SE9"
        committed.credits = 7
        try other.save()
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
