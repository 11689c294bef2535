import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A store opened from a log without a checkpoint leaves its indexes to first need, as it does for a checkpoint's
/// entities: the uniqueness entries and the attribute indexes are built from the columns when a save, a lookup or a
/// fetch needs them, and they then hold what every transaction of the log left, moved and deleted values included.
@Suite("Indexes of a replayed log, built on first need")
struct DeferredReplayIndexTests {
    static let courseEntity = TestModels.school.entities.firstIndex { $0.name == "Course" }!
    static let studentEntity = TestModels.school.entities.firstIndex { $0.name == "Student" }!

    /// A log of several transactions whose unique and indexed values move: course C1 is renamed C2 and a new C1
    /// inserted, C5 is inserted and deleted, student bob is renamed carl.
    static func writeLog(at path: String) throws {
        let container = try ModelContainer(path: path, model: TestModels.school)
        let context = container.newBackgroundContext()
        func course(_ code: String) -> Course {
            let course = Course()
            context.insert(course)
            course.code = code
            return course
        }
        func student(_ name: String) -> Student {
            let student = Student()
            context.insert(student)
            student.name = name
            return student
        }
        let first = course("C1")
        let doomed = course("C5")
        _ = student("ann")
        let bob = student("bob")
        try context.save()
        first.code = "C2"
        try context.save()
        _ = course("C1")
        try context.save()
        context.delete(doomed)
        bob.name = "carl"
        try context.save()
        try container.close()
    }

    static func state(of container: ModelContainer) -> StoreState {
        container.store.state.withLock { $0 }
    }

    @Test func openLeavesTheIndexesPendingUntilFirstNeed() throws {
        let directory = TemporaryDirectory()
        try Self.writeLog(at: directory.file())
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        defer { try? container.close() }
        var state = Self.state(of: container)
        #expect(state.pendingUniqueEntities.contains(Self.courseEntity))
        #expect(state.pendingAttributeIndexEntities.contains(Self.studentEntity))
        #expect(state.uniqueIndex.isEmpty)

        // A fetch through the name index builds the students' indexes, with the rename in them.
        let context = container.newBackgroundContext()
        let named = { (name: String) in
            try context.fetch(FetchDescriptor<Student>(filter: .equal("name", .string(name)))).map(\.name)
        }
        #expect(try named("carl") == ["carl"])
        #expect(try named("bob").isEmpty)
        #expect(try named("ann") == ["ann"])
        state = Self.state(of: container)
        #expect(!state.pendingAttributeIndexEntities.contains(Self.studentEntity))
        #expect(state.pendingUniqueEntities.contains(Self.courseEntity), "a fetch by name builds no uniqueness entry")
    }

    @Test func uniquenessChecksAfterOpenSeeEveryTransactionOfTheLog() throws {
        let directory = TemporaryDirectory()
        try Self.writeLog(at: directory.file())
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        defer { try? container.close() }
        func save(_ code: String) throws {
            let context = container.newBackgroundContext()
            let course = Course()
            context.insert(course)
            course.code = code
            try context.save()
        }
        // C1 (inserted again after the rename) and C2 (the renamed one) are held; C5 was deleted.
        for held in ["C1", "C2"] {
            let error = try #require(throws: EventGraphError.self) { try save(held) }
            #expect(error.code == .uniqueness, "\(held): \(error)")
        }
        #expect(!Self.state(of: container).pendingUniqueEntities.contains(Self.courseEntity))
        try save("C5")
        let codes = try container.newBackgroundContext().fetch(FetchDescriptor<Course>()).map(\.code).sorted()
        #expect(codes == ["C1", "C2", "C5"])
    }

    /// A random log replayed with its indexes left to first need and then built from the columns, against the same
    /// log replayed with its indexes kept through every transaction: the same attribute indexes, the same unique
    /// tuples, and each tuple held by an object whose current values have it. (The random workload gives two courses
    /// the same code, which a save never does: which of the two holds the tuple may differ, as it does for a
    /// checkpoint's entities built on first need.)
    @Test(arguments: [21, 22, 23] as [UInt64])
    func builtOnFirstNeedAsKeptThroughTheReplay(seed: UInt64) throws {
        // The records before the random log's first checkpoint (transaction 151), whose state is not deferred.
        let records = InPlaceReplayTests.records(seed: seed, faulty: false, transactions: 150)
        let model = InPlaceReplayTests.model
        var deferring = Replayer(model: model, untilTransaction: nil, policy: .strict, source: "random")
        deferring.defersIndexes = true
        var keeping = Replayer(model: model, untilTransaction: nil, policy: .strict, source: "random")
        for record in records {
            try deferring.consume(record)
            try keeping.consume(record)
        }
        var deferred = try #require(deferring.state)
        let kept = try #require(keeping.state)
        #expect(kept.objectCount > 50)
        let all = Array(model.entities.indices)
        let withConstraints = all.filter { !model.entities[$0].uniqueConstraints.isEmpty }
        let withIndexes = all.filter { !model.entities[$0].indexedPropertyIndices.isEmpty }
        #expect(!withConstraints.isEmpty && !withIndexes.isEmpty)
        #expect(deferred.pendingUniqueEntities == Set(withConstraints))
        #expect(deferred.pendingAttributeIndexEntities == Set(withIndexes))
        #expect(deferred.uniqueIndex.isEmpty)

        deferred.buildPendingUniqueEntries(all, model: model)
        deferred.buildPendingAttributeIndexes(all)
        #expect(deferred.pendingUniqueEntities.isEmpty && deferred.pendingAttributeIndexEntities.isEmpty)
        for entityIndex in all {
            #expect("\(deferred.indexes[entityIndex])" == "\(kept.indexes[entityIndex])", "entity \(entityIndex)")
        }
        #expect(Set(deferred.uniqueIndex.keys) == Set(kept.uniqueIndex.keys))
        #expect(deferred.uniqueIndex.count > 3)
        for (tuple, key) in deferred.uniqueIndex {
            let constraint = try #require(
                model.entities[tuple.entityIndex].uniqueConstraints.first { $0.ordinal == tuple.ordinal })
            // The holder is an object of the constraint's entity or of one of its sub-entities.
            let row = try #require(
                model.entities[tuple.entityIndex].familyIndices.lazy.compactMap {
                    deferred.version(ofEntity: $0).row(forKey: key)
                }.first)
            #expect(constraint.propertyIndices.map { row.values[$0] } == tuple.values.map(PropertyValue.attribute))
        }
        #expect(deferred.digest(model: model) == kept.digest(model: model))
    }

    @Test func aLookupByUniqueValueBuildsTheEntries() throws {
        let directory = TemporaryDirectory()
        try Self.writeLog(at: directory.file())
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        for (code, count) in [("C1", 1), ("C2", 1), ("C5", 0)] {
            let found = try context.fetch(FetchDescriptor<Course>(filter: .equal("code", .string(code))))
            #expect(found.count == count, "\(code)")
        }
        let state = Self.state(of: container)
        #expect(!state.pendingUniqueEntities.contains(Self.courseEntity))
        #expect(state.uniqueIndex.count == 2)
    }
}
