import EventGraph
import Foundation
import Testing

@Suite("Views as of a transaction")
struct AsOfViewTests {
    @Test func aViewShowsTheStoreAsItWasAfterATransaction() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let context = container.newBackgroundContext()
        let course = Course()
        context.insert(course)
        course.code = "V1"
        try context.save()  // transaction 1
        course.code = "V2"
        let lesson = Lesson()
        context.insert(lesson)
        lesson.course = course
        try context.save()  // transaction 2
        context.delete(course)
        course.members = []
        try context.save()  // transaction 3

        for (transaction, codes, lessons) in [(1, ["V1"], 0), (2, ["V2"], 1), (3, [], 0)] as [(UInt64, [String], Int)] {
            let view = try container.view(asOfTransaction: transaction)
            let viewContext = view.newBackgroundContext()
            #expect(try viewContext.fetch(FetchDescriptor<Course>()).map(\.code) == codes)
            #expect(try viewContext.fetchCount(FetchDescriptor<Lesson>()) == lessons)
            #expect(view.isReadOnly)
            let stray = Course()
            viewContext.insert(stray)
            stray.code = "nope"
            #expect(throws: EventGraphError.self) { try viewContext.save() }
        }
        try container.close()
        // A view of a closed store file, with the model recorded in the log.
        let view = try ModelContainer.view(path: directory.file(), asOfTransaction: 1)
        let objects = try view.newBackgroundContext().fetch(FetchDescriptor(entityName: "Course"))
        #expect(objects.map { $0.value(forKey: "code") } == [.attribute(.string("V1"))])
        #expect(throws: EventGraphError.self) { try ModelContainer.view(path: directory.file(), asOfTransaction: 9) }
    }
}
