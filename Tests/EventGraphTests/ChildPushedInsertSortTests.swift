import Foundation
import Testing

@testable import EventGraph

/// A child's push carries an inserted object's values that differ from the model's defaults only, so the parent's
/// object holds nothing for an attribute left at its default; a fetch sorted by that attribute must read the
/// default, as its filter does (it read `.null`, which sorts first).
@Suite("A parent's sorted fetch orders a pushed insert by the model's default")
struct ChildPushedInsertSortTests {
    @Test(arguments: [true, false]) func studentsSortByYear(ascending: Bool) throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let main = container.newBackgroundContext(name: "root").makeChildContext(name: "main")
        let worker = main.makeChildContext(name: "worker")
        // Year 1 is `Student.year`'s default: the push leaves it out.
        for (name, year) in [("a", Int16(3)), ("b", 1), ("c", 0)] {
            let student = Student()
            worker.insert(student)
            student.name = name
            student.year = year
        }
        try worker.save()
        let descriptor = FetchDescriptor<ManagedObject>(
            entityName: "Student", sortKeys: [SortKey("year", ascending: ascending)])
        let years = try main.fetch(descriptor).map { ($0 as? Student)?.year }
        #expect(years == (ascending ? [0, 1, 3] : [3, 1, 0]) as [Int16?])
    }
}
