import Foundation
import Testing

@testable import EventGraph

@Suite("A root's rollback undoes what a child pushed into it")
struct ChildPushRollbackTests {
    @Test(arguments: [false, true]) func rootRollbackUndoesAPushedUpdate(rootFetchedFirst: Bool) throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let root = container.newBackgroundContext(name: "root")
        let course = Course()
        root.insert(course)
        course.code = "C"
        course.credits = 1
        try root.save()
        if rootFetchedFirst { _ = try root.fetch(FetchDescriptor<Course>()) }
        let child = root.makeChildContext()
        child.mergePolicy = .objectWins
        try #require(try child.fetch(FetchDescriptor<Course>()).first).credits = 13
        try child.save()
        #expect(try root.fetch(FetchDescriptor<Course>()).first?.credits == 13)
        root.rollback()
        #expect(try root.fetch(FetchDescriptor<Course>()).first?.credits == 1)
    }
}
