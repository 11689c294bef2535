import Foundation
import Testing

@testable import EventGraph

/// A root context over a fresh store holding courses "SAVED" (5 credits, one lesson) and "GONE".
private struct Fixture {
    let directory = TemporaryDirectory()
    let container: ModelContainer
    let root: ObjectContext

    init() throws {
        container = try ModelContainer(path: directory.file(), model: TestModels.school)
        root = container.newBackgroundContext(name: "root")
        let saved = Course()
        root.insert(saved)
        saved.code = "SAVED"
        let lesson = Lesson()
        root.insert(lesson)
        lesson.title = "intro"
        lesson.course = saved
        let gone = Course()
        root.insert(gone)
        gone.code = "GONE"
        try root.save()
    }

    func course(_ code: String, in context: ObjectContext) throws -> Course? {
        try context.fetch(FetchDescriptor<Course>(predicate: #Predicate { $0.code == code })).first
    }

    func codes(in context: ObjectContext) throws -> [String] {
        try context.fetch(FetchDescriptor<Course>(sortBy: [SortDescriptor(\.code)])).map(\.code)
    }
}

@Suite("A child context reads through its parent's unsaved changes")
struct ChildContextReadingTests {
    @Test func theChildSeesTheParentsInsertsUpdatesAndDeletes() throws {
        let fixture = try Fixture()
        let root = fixture.root
        let added = Course()
        root.insert(added)
        added.code = "ADDED"
        try #require(try fixture.course("SAVED", in: root)).credits = 9
        root.delete(try #require(try fixture.course("GONE", in: root)))

        let child = root.makeChildContext()
        #expect(child.parentContext === root)
        #expect(try fixture.codes(in: child) == ["ADDED", "SAVED"])
        #expect(try child.fetchCount(FetchDescriptor<Course>()) == 2)
        #expect(try fixture.course("SAVED", in: child)?.credits == 9, "a unique lookup sees the parent's update")
        #expect(try child.fetch(FetchDescriptor<Course>(predicate: #Predicate { $0.credits == 9 })).count == 1)
        let seen = try #require(child.object(with: added.objectID) as? Course)
        #expect(seen !== added && seen.code == "ADDED" && seen.objectID.isTemporary)
        let savedID = try #require(try fixture.course("SAVED", in: root)).objectID
        #expect((child.object(with: savedID) as? Course)?.lessons.map(\.title) == ["intro"])
        #expect(
            try child.fetchOrInsert(Course.self, unique: \.code, equals: "ADDED") === seen,
            "find-or-create finds the parent's unsaved insert")
        #expect(child.insertedObjects.isEmpty)
    }
}

@Suite("A child's save pushes into its parent only")
struct ChildContextPushTests {
    @Test func aChildSaveChangesTheParentAndNotTheLog() throws {
        let fixture = try Fixture()
        let root = fixture.root
        let transactions = fixture.container.lastTransactionID
        let child = root.makeChildContext()
        let added = Course()
        child.insert(added)
        added.code = "ADDED"
        let lesson = Lesson()
        child.insert(lesson)
        lesson.title = "new"
        let savedCourse = try #require(try fixture.course("SAVED", in: child))
        lesson.course = savedCourse
        savedCourse.credits = 7
        child.delete(try #require(try fixture.course("GONE", in: child)))
        try child.save()

        #expect(fixture.container.lastTransactionID == transactions, "a child's save appends nothing to the log")
        #expect(!child.hasChanges)
        #expect(root.hasChanges)
        #expect(try fixture.codes(in: root) == ["ADDED", "SAVED"])
        let saved = try #require(try fixture.course("SAVED", in: root))
        #expect(saved.credits == 7)
        #expect(Set(saved.lessons.map(\.title)) == ["intro", "new"], "both sides of the relationship arrived")
        #expect(try fixture.codes(in: fixture.container.newBackgroundContext()) == ["GONE", "SAVED"])

        try root.save()
        #expect(fixture.container.lastTransactionID == transactions + 1)
        let reader = fixture.container.newBackgroundContext()
        #expect(try fixture.codes(in: reader) == ["ADDED", "SAVED"])
        #expect(try fixture.course("SAVED", in: reader)?.credits == 7)
        #expect(try reader.fetchCount(FetchDescriptor<Lesson>()) == 2)
    }

    @Test func anInvalidChildSaveThrowsAndLeavesTheParentAlone() throws {
        let fixture = try Fixture()
        let child = fixture.root.makeChildContext()
        let lesson = Lesson()
        child.insert(lesson)
        lesson.title = ""
        let error = try #require(throws: EventGraphError.self) { try child.save() }
        #expect(error.code == .validation)
        #expect(!fixture.root.hasChanges)
        #expect(child.hasChanges, "the child keeps its changes to fix them")
    }
}

@Suite("Dropping or rolling back a child leaves its parent untouched")
struct ChildContextDiscardTests {
    enum Discard: CaseIterable { case drop, rollback }

    @Test(arguments: Discard.allCases)
    func discardingAChild(_ discard: Discard) throws {
        let fixture = try Fixture()
        let root = fixture.root
        let registeredBefore = root.registeredObjects.count
        var child: ObjectContext? = root.makeChildContext()
        let course = try #require(try fixture.course("SAVED", in: child!))
        course.credits = 3
        child!.delete(try #require(try fixture.course("GONE", in: child!)))
        let inserted = Course()
        child!.insert(inserted)
        inserted.code = "NEW"
        switch discard {
        case .drop: child = nil
        case .rollback: child!.rollback()
        }
        #expect(!root.hasChanges)
        #expect(root.registeredObjects.count == registeredBefore, "reading through the parent registers nothing")
        #expect(try fixture.codes(in: root) == ["GONE", "SAVED"])
        #expect(try fixture.course("SAVED", in: root)?.credits == 5)
        if let child { #expect(try fixture.codes(in: child) == ["GONE", "SAVED"]) }
    }
}

@Suite("Temporary IDs become permanent when the root saves")
struct ChildContextObjectIDTests {
    @Test func aGrandchildsInsertKeepsATemporaryIDUntilTheRootSaves() throws {
        let fixture = try Fixture()
        let root = fixture.root
        let main = root.makeChildContext(name: "main")
        let worker = main.makeChildContext(name: "worker")
        let course = Course()
        worker.insert(course)
        course.code = "DEEP"
        #expect(course.objectID.isTemporary)
        try worker.save()
        #expect(course.objectID.isTemporary, "pushed into main, not saved")
        try main.save()
        let inMain = try #require(try fixture.course("DEEP", in: main))
        #expect(course.objectID.isTemporary && inMain.objectID.isTemporary)
        try root.save()
        #expect(!course.objectID.isTemporary && !inMain.objectID.isTemporary)
        #expect(course.objectID == inMain.objectID)
        let reader = fixture.container.newBackgroundContext()
        #expect((reader.object(with: course.objectID) as? Course)?.code == "DEEP")
    }
}

@Suite("Siblings that changed the same object follow the merge policy")
struct ChildContextConflictTests {
    @Test(arguments: [(MergePolicy.error, Int32(10)), (.storeWins, 10), (.objectWins, 20)])
    func theSecondSiblingsPush(policy: MergePolicy, expectedCredits: Int32) throws {
        let fixture = try Fixture()
        let root = fixture.root
        let first = root.makeChildContext(name: "first")
        let second = root.makeChildContext(name: "second")
        second.mergePolicy = policy
        let mine = try #require(try fixture.course("SAVED", in: first))
        let theirs = try #require(try fixture.course("SAVED", in: second))
        let lesson = Lesson()
        second.insert(lesson)
        lesson.title = "unrelated"
        mine.credits = 10
        try first.save()
        theirs.credits = 20
        if policy == .error {
            let error = try #require(throws: EventGraphError.self) { try second.save() }
            #expect(error.code == .conflict)
            #expect(error.failures.count == 1)
            #expect(try root.fetchCount(FetchDescriptor<Lesson>()) == 1, "a refused push applies nothing")
        } else {
            try second.save()
            #expect(try root.fetchCount(FetchDescriptor<Lesson>()) == 2)
        }
        #expect(try fixture.course("SAVED", in: root)?.credits == expectedCredits)
    }

    @Test(arguments: [MergePolicy.error, .storeWins, .objectWins])
    func anUpdateOfAnObjectTheParentDeletedMeanwhile(policy: MergePolicy) throws {
        let fixture = try Fixture()
        let root = fixture.root
        let child = root.makeChildContext()
        child.mergePolicy = policy
        let course = try #require(try fixture.course("GONE", in: child))
        course.credits = 1
        root.delete(try #require(try fixture.course("GONE", in: root)))
        if policy == .error {
            let error = try #require(throws: EventGraphError.self) { try child.save() }
            #expect(error.code == .conflict)
        } else {
            try child.save()
        }
        #expect(try fixture.codes(in: root) == ["SAVED"], "the parent's delete stands")
    }
}
