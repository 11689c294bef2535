import EventGraph
import Foundation
import LogFormat
import Testing

@Suite("Views as of a transaction")
struct AsOfViewTests {
    /// A view as of a transaction decodes nothing after it: a later transaction whose payload is no changeset
    /// (its frames intact) fails a view of the whole log, not one of an earlier transaction. The frames after the
    /// view's last transaction are still verified: `DamagedViewTests` finds damage after it in the view's report.
    @Test func aViewDecodesNoTransactionAfterItsOwn() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        do {
            let container = try ModelContainer(path: path, model: TestModels.school)
            let context = container.newBackgroundContext()
            for code in ["A", "B"] {
                let course = Course()
                context.insert(course)
                course.code = code
                try context.save()  // transactions 1 and 2
            }
            try container.close()
        }
        let writer = try LogWriter(path: path)
        try writer.appendTransaction(id: 3, payload: [UInt8](repeating: 0xFF, count: 64))
        try writer.close()

        #expect(throws: EventGraphError.self) { try ModelContainer.view(path: path, model: TestModels.school) }
        for (transaction, codes) in [(1, ["A"]), (2, ["A", "B"])] as [(UInt64, [String])] {
            let view = try ModelContainer.view(path: path, asOfTransaction: transaction, model: TestModels.school)
            let courses = try view.newBackgroundContext().fetch(FetchDescriptor<Course>())
            #expect(courses.map(\.code).sorted() == codes)
            #expect(view.recoveryReport == nil)
        }
    }

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
