import Foundation
import Testing

@testable import EventGraph

/// A child that sets an attribute to the value it read pushes it on save, as Core Data's nested contexts do: the
/// child showed its own value, so its save must not leave the parent's later value standing (the bug seed
/// 6082081789264758438 of the random tree workload found). The child's merge policy settles the conflict with the
/// parent's later change, as it does for any other change.
@Suite("A child's save pushes every attribute it set, also one set to the value it read")
struct ChildNoOpPushTests {
    /// The credits the parent holds after the child's save; `nil` when the save fails with a conflict.
    @Test(arguments: [
        (MergePolicy.objectWins, Int32?.some(1)),
        (MergePolicy.storeWins, Int32?.some(13)),
        (MergePolicy.error, Int32?.none),
    ])
    func aNoOpSetOverAParentsLaterChange(policy: MergePolicy, parentHolds: Int32?) throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let root = container.newBackgroundContext(name: "root")
        let course = Course()
        root.insert(course)
        course.code = "C12"
        course.credits = 1
        try root.save()

        let child = root.makeChildContext()
        child.mergePolicy = policy
        let seen = try #require(try child.fetch(FetchDescriptor<Course>()).first)
        seen.credits = 1
        course.credits = 13
        #expect(seen.credits == 1, "the child shows the value it set")

        if let parentHolds {
            try child.save()
            #expect(course.credits == parentHolds)
            #expect(seen.credits == parentHolds, "after its save the child reads what the parent holds")
        } else {
            #expect(throws: EventGraphError.self) { try child.save() }
            #expect(course.credits == 13)
        }
    }

    /// Without a later change in the parent, the pushed value is the one both hold: nothing changes, and a root
    /// save of it logs no transaction (a root does not log a value the store holds).
    @Test func aNoOpSetAloneChangesNothingBeneath() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let root = container.newBackgroundContext(name: "root")
        let course = Course()
        root.insert(course)
        course.code = "C"
        course.credits = 4
        try root.save()
        let before = container.lastTransactionID

        let child = root.makeChildContext()
        try #require(try child.fetch(FetchDescriptor<Course>()).first).credits = 4
        try child.save()
        #expect(course.credits == 4)
        try root.save()
        #expect(container.lastTransactionID == before)
    }
}
