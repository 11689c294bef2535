import EventGraph
import Foundation
import Testing

@Suite("Relationships and their inverses")
struct RelationshipTests {
    @Test func inversesHoldAfterReopen() throws {
        let directory = TemporaryDirectory()
        do {
            let container = try ModelContainer(path: directory.file(), model: TestModels.school)
            let context = container.newBackgroundContext()
            let math = Course()
            let physics = Course()
            context.insert(math)
            context.insert(physics)
            math.code = "MATH"
            physics.code = "PHYS"
            let ada = Student()
            let alan = Teacher()
            context.insert(ada)
            context.insert(alan)
            ada.name = "Ada"
            alan.name = "Alan"
            ada.courses = [math, physics]
            physics.members.insert(alan)
            let lesson = Lesson()
            context.insert(lesson)
            lesson.course = math
            #expect(math.lessons == [lesson])
            #expect(alan.courses == [physics], "setting one side sets the inverse")
            try context.save()
            try container.close()
        }
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let context = container.newBackgroundContext()
        let courses = try context.fetch(FetchDescriptor<Course>(sortBy: [SortDescriptor(\.code)]))
        #expect(courses.map(\.code) == ["MATH", "PHYS"])
        #expect(Set(courses[0].members.map(\.name)) == ["Ada"])
        #expect(Set(courses[1].members.map(\.name)) == ["Ada", "Alan"])
        #expect(courses[0].lessons.first?.course === courses[0])
        let ada = try #require(try context.fetch(FetchDescriptor<Student>()).first)
        #expect(Set(ada.courses.map(\.code)) == ["MATH", "PHYS"])
        try container.close()
    }

    /// A new object's setter tells repeated targets apart by comparing a few (up to 8) and by hashing more, and
    /// attaches each target's inverse once.
    @Test(arguments: [3, 12])
    func repeatedTargetsOfANewObjectAreKeptOnce(lessonCount: Int) throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let context = container.newBackgroundContext()
        let course = Course()
        context.insert(course)
        course.code = "REP"
        let lessons = (0..<lessonCount).map { _ in Lesson() }
        for lesson in lessons { context.insert(lesson) }
        course.lessons = lessons + lessons.reversed()
        #expect(course.lessons == lessons)
        for lesson in lessons { #expect(lesson.course === course) }
        try context.save()
        let reader = container.newBackgroundContext()
        let saved = try #require(try reader.fetch(FetchDescriptor<Course>()).first)
        #expect(saved.lessons.count == lessonCount)
        #expect(saved.lessons.allSatisfy { $0.course === saved })
    }

    @Test func toOneInverseMovesTheTargetBetweenOwners() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let context = container.newBackgroundContext()
        let first = Course()
        let second = Course()
        let lesson = Lesson()
        [first, second, lesson].forEach(context.insert)
        first.code = "A"
        second.code = "B"
        lesson.course = first
        #expect(first.lessons == [lesson])
        second.lessons = [lesson]
        #expect(lesson.course === second)
        #expect(first.lessons.isEmpty, "moving the lesson removes it from its previous course")
        try context.save()
        let other = container.newBackgroundContext()
        let courses = try other.fetch(FetchDescriptor<Course>(sortBy: [SortDescriptor(\.code)]))
        #expect(courses[0].lessons.isEmpty)
        #expect(courses[1].lessons.count == 1)
    }

    @Test func removingFromAToManyClearsTheInverse() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let context = container.newBackgroundContext()
        let course = Course()
        let student = Student()
        context.insert(course)
        context.insert(student)
        course.code = "X"
        course.members = [student]
        try context.save()
        course.members = []
        #expect(student.courses.isEmpty)
        try context.save()
        let other = container.newBackgroundContext()
        let reloaded = try #require(try other.fetch(FetchDescriptor<Student>()).first)
        #expect(reloaded.courses.isEmpty)
    }
}
