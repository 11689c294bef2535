import LogFormat
import Testing

@testable import EventGraph

/// A child's push carries an inserted object's values that differ from the model's defaults only; a controller on
/// the parent must place the object by those defaults, as a fetch reads it (seed 1 of
/// `FetchedResultsRandomTests`, step 51).
@Suite("A controller places a pushed insert in the section a fetch gives it")
struct FetchedResultsPushedInsertTests {
    /// Year 1 is `Student.year`'s default, which the push leaves out; year 3 is pushed.
    @Test(arguments: [Int16(1), 3]) func aPushedInsertLandsInItsYearsSection(year: Int16) throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let main = container.newBackgroundContext(name: "root").makeChildContext(name: "main")
        let controller = try FetchedResultsController(
            FetchedResultsRandomTests.descriptor(), in: main, sectionedBy: \.year)
        let worker = main.makeChildContext(name: "worker")
        let student = Student()
        worker.insert(student)
        student.name = "ann"
        student.year = year
        try worker.save()
        let difference = try controller.processPendingChanges()
        #expect(difference.insertedRows.count == 1)
        #expect(controller.fetchedSections.map(\.name) == [FetchedResultsOrder.sectionName(.int16(year))])
        #expect(controller.fetchedObjects.map(\.year) == [year])
    }
}
