import EventGraph
import Foundation
import Testing

@Suite("Fetching")
struct FetchTests {
    /// Ten courses C0…C9 with credits 0…9, saved; plus two students and a teacher.
    private func makeStore() throws -> (ModelContainer, ObjectContext) {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let context = container.newBackgroundContext()
        for index in 0..<10 {
            let course = Course()
            context.insert(course)
            course.code = "C\(index)"
            course.credits = Int32(index)
        }
        for name in ["Ada", "Grace"] {
            let student = Student()
            context.insert(student)
            student.name = name
        }
        let teacher = Teacher()
        context.insert(teacher)
        teacher.name = "Alan"
        try context.save()
        return (container, container.newBackgroundContext())
    }

    @Test func predicatesSortsAndWindows() throws {
        let (_, context) = try makeStore()
        var descriptor = FetchDescriptor<Course>(
            predicate: #Predicate { $0.credits >= 3 && $0.code != "C5" },
            sortBy: [SortDescriptor(\.credits, order: .reverse)])
        #expect(try context.fetch(descriptor).map(\.credits) == [9, 8, 7, 6, 4, 3])
        descriptor.fetchOffset = 1
        descriptor.fetchLimit = 2
        #expect(try context.fetch(descriptor).map(\.credits) == [8, 7])
        #expect(try context.fetchCount(FetchDescriptor<Course>()) == 10)
    }

    @Test func runTimeFiltersEvaluateOnRows() throws {
        let (_, context) = try makeStore()
        let filter = FetchFilter.or([.compare("credits", .less, .int32(2)), .compare("code", .equal, .string("C9"))])
        var descriptor = FetchDescriptor<Course>(filter: filter)
        descriptor.sortKeys = [SortKey("credits")]
        #expect(try context.fetch(descriptor).map(\.code) == ["C0", "C1", "C9"])
        #expect(try context.fetch(FetchDescriptor<Course>(filter: .equal("code", .string("C4")))).map(\.credits) == [4])
        #expect(
            try context.fetch(FetchDescriptor<Course>(filter: .not(.compare("code", .beginsWith, .string("C")))))
                .isEmpty)
        #expect(throws: EventGraphError.self) {
            try context.fetch(FetchDescriptor<Course>(filter: .equal("nope", .null)))
        }
    }

    @Test func subentitiesAreIncludedUnlessExcluded() throws {
        let (_, context) = try makeStore()
        #expect(Set(try context.fetch(FetchDescriptor<Person>()).map(\.name)) == ["Ada", "Grace", "Alan"])
        var studentsOnly = FetchDescriptor<Person>()
        studentsOnly.entityName = "Student"
        #expect(try context.fetch(studentsOnly).count == 2)
        #expect(try context.fetch(FetchDescriptor<Teacher>()).map(\.name) == ["Alan"])
        #expect(
            try context.fetch(FetchDescriptor<Person>(predicate: #Predicate { $0.name == "Alan" })).first is Teacher)
    }

    @Test func resultsIncludeUnsavedInsertsAndChangesAndExcludeDeletes() throws {
        let (_, context) = try makeStore()
        let all = try context.fetch(FetchDescriptor<Course>(sortBy: [SortDescriptor(\.code)]))
        context.delete(all[0])
        all[1].credits = 100
        let fresh = Course()
        context.insert(fresh)
        fresh.code = "NEW"
        fresh.credits = 50
        let big = try context.fetch(FetchDescriptor<Course>(predicate: #Predicate { $0.credits >= 50 }))
        #expect(Set(big.map(\.code)) == ["C1", "NEW"])
        #expect(try context.fetch(FetchDescriptor<Course>()).count == 10)
        #expect(!(try context.fetch(FetchDescriptor<Course>())).contains(all[0]))
        var committedOnly = FetchDescriptor<Course>(filter: .compare("credits", .greaterOrEqual, .int32(50)))
        committedOnly.includesPendingChanges = false
        #expect(try context.fetch(committedOnly).isEmpty)
        #expect(
            try context.fetch(FetchDescriptor<Course>(filter: .compare("credits", .greaterOrEqual, .int32(50)))).count
                == 2)
    }

    @Test func fetchByIDAndUniquing() throws {
        let (_, context) = try makeStore()
        let courses = try context.fetch(FetchDescriptor<Course>())
        let ids = courses.map(\.objectID)
        #expect(context.fetch(Course.self, ids: ids.reversed()).map(\.code) == courses.reversed().map(\.code))
        #expect(context.object(with: ids[0]) === courses[0], "one object per ID per context")
        let missing = ObjectID(storeUUID: ids[0].storeUUID, entityName: "Course", key: 999_999)
        #expect(context.object(with: missing) == nil)
        #expect(ObjectID(uriString: ids[3].uriString) == ids[3])
        let data = try JSONEncoder().encode(ids[3])
        #expect(try JSONDecoder().decode(ObjectID.self, from: data) == ids[3])
        #expect(ids[3].uriString.hasPrefix("eventgraph://\(ids[3].storeUUID.uuidString)/Course/"))
    }
}

@Suite("Model description")
struct ModelTests {
    @Test func theHashIsStableAndDescribesTheShape() throws {
        let again = try ObjectModel(
            name: "Other name", version: "7",
            types: [Student.self, Teacher.self, Course.self, Lesson.self, Note.self], abstractTypes: [Person.self])
        #expect(again.hash == TestModels.school.hash, "name and version do not change the shape")
        #expect(TestModels.samples.hash != TestModels.school.hash)
        let fromSchema = try ObjectModel(schema: TestModels.school.schema)
        #expect(fromSchema.hash == TestModels.school.hash)
        let person = try #require(TestModels.school.entity(named: "Person"))
        #expect(person.isAbstract)
        #expect(person.familyIndices.count == 3)
        let course = try #require(TestModels.school.entity(named: "Course"))
        #expect(
            course.relationship(named: "members")?.inverseName == "courses",
            "an inverse named on one side is recorded on both")
        #expect(course.attribute(named: "code")?.isUnique == true)
        #expect(course.uniquenessConstraints == [["code"]])
    }

    @Test func inconsistentDeclarationsAreRejected() {
        final class Orphan: ManagedObject {
            @Relationship(inverse: "missing") var target: Lesson?
        }
        #expect(throws: EventGraphError.self) { try ObjectModel(types: [Orphan.self, Lesson.self]) }
    }
}
