import EventGraph
import Foundation
import Testing

@Suite("Several contexts, conflicts and merge policies")
struct ConcurrencyTests {
    @Test func contextsOnSeveralTasksSaveConcurrently() async throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let taskCount = 8
        let perTask = 25
        let course: ObjectID = try {
            let context = container.newBackgroundContext()
            let course = Course()
            context.insert(course)
            course.code = "SHARED"
            try context.save()
            return course.objectID
        }()
        try await withThrowingTaskGroup(of: [ObjectID].self) { group in
            for task in 0..<taskCount {
                group.addTask {
                    // The context and its objects never leave this task; only IDs come back.
                    let context = container.newBackgroundContext(name: "worker \(task)")
                    let shared = try #require(context.object(with: course) as? Course)
                    var ids: [ObjectID] = []
                    for index in 0..<perTask {
                        let student = Student()
                        context.insert(student)
                        student.name = "s\(task)-\(index)"
                        student.courses = [shared]
                        try context.save()
                        ids.append(student.objectID)
                    }
                    return ids
                }
            }
            var all: [ObjectID] = []
            for try await ids in group { all += ids }
            #expect(Set(all).count == taskCount * perTask)
        }
        #expect(container.lastTransactionID == UInt64(1 + taskCount * perTask))
        let reader = container.newBackgroundContext()
        let shared = try #require(try reader.fetch(FetchDescriptor<Course>()).first)
        #expect(shared.members.count == taskCount * perTask, "to-many additions from concurrent saves merge")
        try container.close()
    }

    @MainActor
    @Test func theMainContextSeesOtherContextsSavesOnItsNextFetch() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let main = container.mainContext
        #expect(try main.fetchCount(FetchDescriptor<Course>()) == 0)
        let background = container.newBackgroundContext()
        let course = Course()
        background.insert(course)
        course.code = "M"
        try background.save()
        let seen = try main.fetch(FetchDescriptor<Course>())
        #expect(seen.map(\.code) == ["M"])
        course.code = "N"
        try background.save()
        #expect(try main.fetch(FetchDescriptor<Course>()).map(\.code) == ["N"], "unchanged objects update on fetch")
    }

    /// Two contexts read the same course, the first saves a change; returns the second context's course.
    private func conflict(_ policy: MergePolicy) throws -> (ModelContainer, ObjectContext, Course) {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let setup = container.newBackgroundContext()
        let course = Course()
        setup.insert(course)
        course.code = "C"
        course.credits = 5
        try setup.save()
        let first = container.newBackgroundContext()
        let second = container.newBackgroundContext()
        second.mergePolicy = policy
        let theirs = try #require(first.object(with: course.objectID) as? Course)
        let mine = try #require(second.object(with: course.objectID) as? Course)
        _ = mine.code
        theirs.code = "THEIRS"
        theirs.credits = 10
        try first.save()
        mine.code = "MINE"
        return (container, second, mine)
    }

    @Test func theSecondSaveFailsByDefaultNamingTheObjects() throws {
        let (container, context, mine) = try conflict(.error)
        let error = try #require(throws: EventGraphError.self) { try context.save() }
        #expect(error.code == .conflict)
        #expect(error.failures.map(\.objectID) == [mine.objectID])
        #expect(container.lastTransactionID == 2)
        context.refresh(mine)
        #expect(mine.code == "THEIRS")
    }

    @Test func storeWinsKeepsTheStoresValues() throws {
        let (container, context, mine) = try conflict(.storeWins)
        try context.save()
        #expect(mine.code == "THEIRS")
        let check = container.newBackgroundContext()
        #expect(try check.fetch(FetchDescriptor<Course>()).map(\.code) == ["THEIRS"])
    }

    @Test func objectWinsKeepsTheContextsValues() throws {
        let (container, context, _) = try conflict(.objectWins)
        try context.save()
        let check = container.newBackgroundContext()
        let course = try #require(try check.fetch(FetchDescriptor<Course>()).first)
        #expect(course.code == "MINE")
        #expect(course.credits == 10, "properties the context did not change keep the store's values")
    }

    @Test func findOrCreateDoesNotRaceBetweenContexts() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let first = container.newBackgroundContext()
        let second = container.newBackgroundContext()
        let a = try first.fetchOrInsert(Course.self, unique: \.code, equals: "RACE") { $0.credits = 1 }
        let b = try second.fetchOrInsert(Course.self, unique: \.code, equals: "RACE") { $0.credits = 2 }
        #expect(a.isInserted && b.isInserted)
        try first.save()
        try second.save()
        #expect(a.objectID == b.objectID, "the second insert became an update of the first object")
        let check = container.newBackgroundContext()
        let courses = try check.fetch(FetchDescriptor<Course>())
        #expect(courses.count == 1)
        #expect(courses.first?.credits == 2)
        #expect(try first.fetchOrInsert(Course.self, unique: \.code, equals: "RACE") === a)
    }
}
