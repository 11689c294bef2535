import Foundation
import Testing

@testable import EventGraph

@Suite("A lookup by ID makes an object of the row's entity")
struct LookupByIDEntityTests {
    @Test("an ID naming the object's entity or a super-entity finds an object of the object's own entity")
    func idsOfTheEntityAndOfASuperEntity() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let setup = container.newBackgroundContext()
        let student = Student()
        setup.insert(student)
        student.name = "Ada"
        let teacher = Teacher()
        setup.insert(teacher)
        teacher.name = "Grace"
        try setup.save()
        let studentID = student.objectID
        let asPerson = ObjectID(storeUUID: studentID.storeUUID, entityName: "Person", key: studentID.key)

        // A fresh context for each ID: the first lookup makes the object (the registry does not have it yet).
        let bySuperEntity = container.newBackgroundContext()
        let found = try #require(bySuperEntity.object(with: asPerson))
        #expect(found is Student && found.entity.name == "Student")
        #expect((found as? Student)?.name == "Ada")

        let byOwnEntity = container.newBackgroundContext()
        let direct = try #require(byOwnEntity.object(with: studentID))
        #expect(direct is Student && direct.entity.name == "Student")
        // Then the super-entity's ID finds the registered one, and another entity's ID finds nothing.
        #expect(byOwnEntity.object(with: asPerson) === direct)
        let asTeacher = ObjectID(storeUUID: studentID.storeUUID, entityName: "Teacher", key: studentID.key)
        #expect(container.newBackgroundContext().object(with: asTeacher) == nil)
        #expect(byOwnEntity.object(with: asTeacher) == nil)
    }
}
