import EventGraph
import EventGraphExamples
import Foundation
import Testing

// The test target has a school model of its own with the same class names.
private typealias ClassStudent = EventGraphExamples.Student
private typealias ClassTeacher = EventGraphExamples.Teacher
private typealias ClassCourse = EventGraphExamples.Course

/// Seed 003 end to end: people in a private store, courses in a public one, relationships across them kept by the
/// engine, student numbers from a named counter, and the public store unmounted and mounted again.
@Suite("Seed 003: iClass across a private and a public store")
struct IClassExampleTests {
    private let directory = TemporaryDirectory()
    private var privatePath: String { directory.file("private.eglog") }
    private var publicPath: String { directory.file("public.eglog") }

    private func open(publicMounting: StoreDescription.Mounting = .always) throws -> ModelContainer {
        try IClassLibrary.open(privatePath: privatePath, publicPath: publicPath, publicMounting: publicMounting)
    }

    /// Enrols Ada and Cy in Swift and Logs, Ben teaches both, Dee teaches nothing; returns the course IDs.
    private func setUpSchool() throws -> [String: ObjectID] {
        let container = try open()
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let swift = try IClassLibrary.course(titled: "Swift", in: context)
        let logs = try IClassLibrary.course(titled: "Logs", in: context)
        _ = try IClassLibrary.enrolStudent(named: "Ada", in: [swift, logs], context: context, container: container)
        _ = try IClassLibrary.enrolStudent(named: "Cy", in: [swift], context: context, container: container)
        _ = IClassLibrary.hireTeacher(named: "Ben", for: [swift, logs], context: context)
        _ = IClassLibrary.hireTeacher(named: "Dee", for: [], context: context)
        try context.save()
        return ["Swift": swift.objectID, "Logs": logs.objectID]
    }

    @Test func enrolAssignAndReopenBothStores() throws {
        let courses = try setUpSchool()
        let container = try open()
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let students = try IClassLibrary.students(in: context)
        #expect(students.map(\.name) == ["Ada", "Cy"])
        #expect(students.map(\.studentNumber) == [1, 2], "numbered by the studentID counter")
        #expect(students[0].courses.map(\.title).sorted() == ["Logs", "Swift"])
        let swift = try #require(context.object(with: courses["Swift"]!) as? ClassCourse)
        #expect(swift.objectID.storeUUID == container.storeUUID(ofConfiguration: IClassLibrary.publicConfiguration))
        #expect(students[0].objectID.storeUUID != swift.objectID.storeUUID, "two stores")
        #expect(Set(swift.students.map(\.name)) == ["Ada", "Cy"])
        #expect(swift.teacher?.name == "Ben")
        #expect(swift.teacher?.courses.count == 2)
        let people = try context.fetch(FetchDescriptor<EventGraphExamples.Person>(sortBy: [SortDescriptor(\.name)]))
        #expect(people.map(\.name) == ["Ada", "Ben", "Cy", "Dee"], "the abstract entity fetches both sub-entities")
    }

    @Test func deletingATeacherLeavesTheCoursesWithoutOne() throws {
        let courses = try setUpSchool()
        do {
            let container = try open()
            defer { try? container.close() }
            let context = container.newBackgroundContext()
            let ben = try #require(
                try context.fetch(FetchDescriptor<ClassTeacher>(predicate: #Predicate { $0.name == "Ben" })).first)
            context.delete(ben)
            try context.save()
        }
        let container = try open()
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        for title in ["Swift", "Logs"] {
            let course = try #require(context.object(with: courses[title]!) as? ClassCourse)
            #expect(course.teacher == nil, "\(title)'s teacher was nullified in the public store")
        }
    }

    @Test func thePublicStoreUnmountedThenMountedAgain() throws {
        let courses = try setUpSchool()
        do {
            let container = try open(publicMounting: .never)
            defer { try? container.close() }
            #expect(container.unmountedStores.map(\.configuration) == [IClassLibrary.publicConfiguration])
            let context = container.newBackgroundContext()
            #expect(try IClassLibrary.courses(in: context).isEmpty)
            let students = try IClassLibrary.students(in: context)
            let ada = students[0]
            #expect(ada.courses.isEmpty, "the courses are not there to read")
            #expect(
                Set(context.unresolvedReferences(of: ada).map(\.target)) == Set(courses.values),
                "but they are named, with their store")
            // The app goes on: a rename, a new student (numbered on), and Cy leaves the school.
            ada.name = "Ada L."
            _ = try IClassLibrary.enrolStudent(named: "Eve", in: [], context: context, container: container)
            context.delete(students[1])
            try context.save()
        }
        let container = try open()
        defer { try? container.close() }
        let cleaned = container.referenceCleanup.cleanedReferences
        #expect(cleaned.map(\.relationshipName) == ["students"], "Cy left the Swift course's list: \(cleaned)")
        #expect(cleaned.map(\.source) == [courses["Swift"]!])
        let context = container.newBackgroundContext()
        let swift = try #require(context.object(with: courses["Swift"]!) as? ClassCourse)
        #expect(swift.students.map(\.name) == ["Ada L."])
        let students = try IClassLibrary.students(in: context)
        #expect(students.map(\.name) == ["Ada L.", "Eve"])
        #expect(students.map(\.studentNumber) == [1, 3], "Cy's number is not handed out again")
        #expect(students[0].courses.map(\.title).sorted() == ["Logs", "Swift"])
    }
}
