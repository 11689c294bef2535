import EventGraph
import Foundation
import Testing

@Suite("Delete rules")
struct DeleteRuleTests {
    /// A course with a member, two lessons and a note, saved.
    private func makeSchool() throws -> (ModelContainer, ObjectContext, Course, Student) {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let context = container.newBackgroundContext()
        let course = Course()
        context.insert(course)
        course.code = "C1"
        let student = Student()
        context.insert(student)
        student.courses = [course]
        for title in ["one", "two"] {
            let lesson = Lesson()
            context.insert(lesson)
            lesson.title = title
            lesson.course = course
        }
        let note = Note()
        context.insert(note)
        note.course = course
        try context.save()
        return (container, context, course, student)
    }

    @Test func nullifyRemovesTheObjectFromItsTargets() throws {
        let (container, context, course, student) = try makeSchool()
        context.delete(student)
        #expect(course.members.isEmpty)
        try context.save()
        let other = container.newBackgroundContext()
        let reloaded = try #require(try other.fetch(FetchDescriptor<Course>()).first)
        #expect(reloaded.members.isEmpty)
        #expect(try other.fetchCount(FetchDescriptor<Person>()) == 0)
    }

    @Test func cascadeDeletesTheTargets() throws {
        let (container, context, course, student) = try makeSchool()
        course.members = []
        _ = student
        context.delete(course)
        try context.save()
        let other = container.newBackgroundContext()
        #expect(try other.fetchCount(FetchDescriptor<Lesson>()) == 0)
        #expect(try other.fetchCount(FetchDescriptor<Course>()) == 0)
    }

    @Test func denyRefusesTheSaveWhileTargetsRemain() throws {
        let (container, context, course, _) = try makeSchool()
        context.delete(course)
        let error = try #require(throws: EventGraphError.self) { try context.save() }
        #expect(error.code == .deleteDenied)
        #expect(error.failures.first?.propertyName == "members")
        #expect(container.lastTransactionID == 1)
        context.rollback()
        #expect(!course.isDeleted)
        #expect(course.lessons.count == 2, "rollback restores what the cascade had changed")
    }

    @Test func noActionLeavesTheTargetsPointingAtTheDeletedObject() throws {
        let (container, context, course, _) = try makeSchool()
        course.members = []
        context.delete(course)
        try context.save()
        let other = container.newBackgroundContext()
        let note = try #require(try other.fetch(FetchDescriptor<Note>()).first)
        #expect(note.course != nil, "no action: the note still refers to the deleted course")
        #expect(note.course?.code == "", "the dangling target reads as defaults")
    }
}
