import EventGraph
import EventGraphExamples
import Foundation
import Testing

@Suite("Smoke")
struct SmokeTests {
    @Test func insertSaveReopen() throws {
        let directory = TemporaryDirectory()
        do {
            let container = try ModelContainer(path: directory.file(), model: TestModels.school)
            let context = container.newBackgroundContext()
            let course = Course()
            context.insert(course)
            course.code = "CS101"
            let student = Student()
            context.insert(student)
            student.name = "Ada"
            student.courses = [course]
            #expect(course.members.count == 1)
            try context.save()
            #expect(!student.objectID.isTemporary)
            try container.close()
        }
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let context = container.newBackgroundContext()
        let people = try context.fetch(FetchDescriptor<Person>())
        #expect(people.count == 1)
        let student = try #require(people.first as? Student)
        #expect(student.isFault)
        #expect(student.name == "Ada")
        #expect(!student.isFault)
        #expect(student.courses.first?.code == "CS101")
        #expect(student.courses.first?.members.first === student)
        try container.close()
    }
}
