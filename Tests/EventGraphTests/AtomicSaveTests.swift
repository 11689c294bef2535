import EventGraph
import Foundation
import Testing

@Suite("A failed save leaves no trace")
struct AtomicSaveTests {
    @Test func validationFailuresListEveryObjectAndPropertyAndWriteNothing() throws {
        let directory = TemporaryDirectory()
        let byteCountBefore: UInt64
        do {
            let container = try ModelContainer(path: directory.file(), model: TestModels.school)
            let context = container.newBackgroundContext()
            let course = Course()
            context.insert(course)
            course.code = "OK"
            try context.save()
            byteCountBefore = directory.byteCount()
            course.credits = 99
            let lesson = Lesson()
            context.insert(lesson)
            lesson.title = ""
            let note = Note()
            context.insert(note)
            note.text = "forbidden"
            let error = try #require(throws: EventGraphError.self) { try context.save() }
            #expect(error.code == .validation)
            let failures = Set(error.failures.map { "\($0.entityName).\($0.propertyName ?? "-")" })
            #expect(failures == ["Course.credits", "Lesson.title", "Note.-"])
            #expect(error.description.contains("forbidden"))
            #expect(directory.byteCount() == byteCountBefore, "nothing was appended")
            #expect(context.hasChanges, "the context keeps its changes so they can be fixed")
            try container.close()
        }
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let context = container.newBackgroundContext()
        #expect(try context.fetch(FetchDescriptor<Course>()).map(\.credits) == [5])
        #expect(try context.fetchCount(FetchDescriptor<Lesson>()) == 0)
        #expect(try context.fetchCount(FetchDescriptor<Note>()) == 0)
        #expect(container.lastTransactionID == 1)
        try container.close()
    }

    @Test func uniquenessViolationsWriteNothing() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let context = container.newBackgroundContext()
        let course = Course()
        context.insert(course)
        course.code = "DUP"
        try context.save()
        let byteCountBefore = directory.byteCount()

        let other = container.newBackgroundContext()
        let twin = Course()
        other.insert(twin)
        twin.code = "DUP"
        let lesson = Lesson()
        other.insert(lesson)
        let error = try #require(throws: EventGraphError.self) { try other.save() }
        #expect(error.code == .uniqueness)
        #expect(error.failures.count == 1)
        #expect(error.failures.first?.propertyName == "code")
        #expect(directory.byteCount() == byteCountBefore)
        #expect(try other.fetchCount(FetchDescriptor<Lesson>(predicate: nil)) == 1, "only the unsaved insert")
        #expect(try container.newBackgroundContext().fetchCount(FetchDescriptor<Lesson>()) == 0)

        // Two new objects clashing with each other in one save.
        let third = container.newBackgroundContext()
        for _ in 0..<2 {
            let copy = Course()
            third.insert(copy)
            copy.code = "SAME"
        }
        #expect(throws: EventGraphError.self) { try third.save() }
        #expect(directory.byteCount() == byteCountBefore)
        try container.close()
    }

    /// The in-memory store's log is a file like any other: a failed write poisons its writer, as on disk, and the
    /// store reopened from the file holds nothing of the failed save.
    @Test func aLogFailureChangesNeitherTheStoreNorTheContext() throws {
        let probe = MemoryStoreProbe()
        let container = try probe.container(model: TestModels.school)
        let context = container.newBackgroundContext()
        let course = Course()
        context.insert(course)
        course.code = "IO"
        probe.failNextAppend()
        #expect(throws: EventGraphError.self) { try context.save() }
        #expect(container.lastTransactionID == 0)
        #expect(course.objectID.isTemporary)
        #expect(course.code == "IO", "the context keeps its unsaved change")
        #expect(try container.newBackgroundContext().fetchCount(FetchDescriptor<Course>()) == 0)
        try? container.close()

        let reopened = try probe.container(model: TestModels.school)
        #expect(reopened.lastTransactionID == 0)
        let retry = reopened.newBackgroundContext()
        let again = Course()
        retry.insert(again)
        again.code = "IO"
        try retry.save()
        #expect(reopened.lastTransactionID == 1)
        #expect(!again.objectID.isTemporary)
        try reopened.close()
    }

    @Test func keysAreNeverReused() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let context = container.newBackgroundContext()
        let first = Course()
        context.insert(first)
        let firstKey = first.objectID.key
        context.rollback()
        let second = Course()
        context.insert(second)
        #expect(second.objectID.key > firstKey)
    }
}
