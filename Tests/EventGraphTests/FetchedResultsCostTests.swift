import Foundation
import Testing

@testable import EventGraph

/// A save that changes one object costs the controller one evaluation and a logarithmic number of comparisons,
/// whatever the size of its results: it never fetches again (counted work, not time).
@Suite("Fetched results cost per change")
struct FetchedResultsCostTests {
    @Test(arguments: [
        (100, "moves a row"), (3_000, "moves a row"), (100, "updates in place"), (3_000, "updates in place"),
    ])
    func oneChangedObjectCostsOneEvaluation(resultCount: Int, kind: String) throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let writer = container.newBackgroundContext(name: "writer")
        for index in 0..<resultCount {
            let student = Student()
            writer.insert(student)
            student.name = String(format: "s%06d", index * 2)
            student.year = Int16(1 + index % 4)
        }
        try writer.save()
        let viewer = container.newBackgroundContext(name: "viewer")
        let controller = try FetchedResultsController(
            FetchedResultsRandomTests.descriptor(), in: viewer, sectionedBy: \.year)
        #expect(controller.fetchedObjects.count == resultCount)

        let student = try #require(
            try writer.fetch(FetchDescriptor<Student>(filter: .equal("name", .string("s000010")))).first)
        if kind == "moves a row" {
            student.name = String(format: "s%06d", resultCount)  // to the middle of the order
            student.year = 4
        } else {
            // A relationship is not part of the order: the row stays where it is.
            let course = Course()
            writer.insert(course)
            course.code = "C1"
            student.courses = [course]
        }
        try writer.save()
        viewer.lastFetchStatistics = FetchStatistics()
        controller.statistics = FetchedResultsStatistics()
        let difference = try controller.processPendingChanges()

        #expect(viewer.lastFetchStatistics.rowsExamined == 0, "the controller fetched again")
        #expect(controller.statistics.objectsEvaluated == 1)
        // Each of the (at most) four binary searches of one batch: one over 4 sections, one over a section's rows.
        let bound = 4 * (3 + Int(log2(Double(resultCount))) + 1)
        #expect(controller.statistics.comparisons <= bound, "\(controller.statistics.comparisons) comparisons")
        if kind == "moves a row" {
            #expect(
                difference.movedRows.count == 1 && difference.insertedRows.isEmpty && difference.deletedRows.isEmpty)
        } else {
            #expect(difference.updatedRows.count == 1 && difference.movedRows.isEmpty)
        }
    }
}
