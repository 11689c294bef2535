import LogFormat
import Testing

@testable import EventGraph

/// A save of new objects that point only at each other skips the merge policy (nothing it checks can have changed);
/// one that points at an existing object still goes through it, and uniqueness is enforced for both.
@Suite("Conflict check of a save of new objects")
struct SelfContainedInsertionTests {
    @Test func onlyInsertsBetweenNewObjectsSkipTheMergePolicy() {
        let course = ObjectReference(entityIndex: 2, key: 10)
        let lesson = ObjectReference(entityIndex: 3, key: 11)
        let elsewhere = ObjectReference(storeIndex: 1, entityIndex: 2, key: 3)
        let existing = ObjectReference(entityIndex: 2, key: 4)
        func insert(_ object: ObjectReference, _ value: PropertyValue) -> ChangeOperation {
            .insert(
                object,
                [PropertyChange(propertyIndex: 0, value: .attribute(.int32(1))), .init(propertyIndex: 1, value: value)])
        }
        #expect(Store.isSelfContainedInsertion([insert(lesson, .toOne(course)), insert(course, .toMany([lesson]))]))
        #expect(Store.isSelfContainedInsertion([insert(lesson, .toOne(elsewhere)), insert(course, .toOne(nil))]))
        #expect(!Store.isSelfContainedInsertion([insert(lesson, .toOne(existing))]))
        #expect(
            !Store.isSelfContainedInsertion([insert(course, .toMany([lesson, existing])), insert(lesson, .toOne(nil))]))
        #expect(!Store.isSelfContainedInsertion([insert(course, .toOne(nil)), .delete(existing)]))
    }

    /// The inserted keys are a bitmap over their range when dense and a set when sparse; either way a target is
    /// found exactly when it is one of them, at both ends of the range and beyond them.
    @Test func targetsAreFoundAmongDenseAndSparseKeys() {
        func insert(_ key: UInt64, pointingAt targets: [UInt64]) -> ChangeOperation {
            .insert(
                ObjectReference(entityIndex: 0, key: key),
                [.init(propertyIndex: 0, value: .toMany(targets.map { ObjectReference(entityIndex: 0, key: $0) }))])
        }
        let dense = (100..<300).map { insert($0, pointingAt: []) }
        #expect(InsertedKeys(dense, low: 100, high: 299).isBitmap)
        for target: UInt64 in [100, 163, 164, 299] {
            #expect(Store.isSelfContainedInsertion(dense + [insert(300, pointingAt: [target])]))
        }
        for target: UInt64 in [0, 99, 301, 1 << 40, .max] {
            #expect(!Store.isSelfContainedInsertion(dense + [insert(300, pointingAt: [target])]))
        }
        let keys: [UInt64] = [1, 1 << 40, .max]
        let sparse = keys.map { insert($0, pointingAt: keys) }
        #expect(!InsertedKeys(sparse, low: 1, high: .max).isBitmap)
        #expect(Store.isSelfContainedInsertion(sparse))
        #expect(!Store.isSelfContainedInsertion(sparse + [insert(2, pointingAt: [3])]))
        #expect(Store.isSelfContainedInsertion([insert(.max, pointingAt: [.max])]))
        #expect(!Store.isSelfContainedInsertion([insert(.max, pointingAt: [.max - 64])]))
    }

    @Test(arguments: [MergePolicy.error, .objectWins])
    func aNewObjectPointingAtOneDeletedMeanwhileStillFollowsThePolicy(policy: MergePolicy) throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let first = container.newBackgroundContext()
        let course = Course()
        first.insert(course)
        course.code = "C1"
        try first.save()
        let second = container.newBackgroundContext()
        second.mergePolicy = policy
        let seen = try #require(second.fetch(Course.self, ids: [course.objectID]).first)
        first.delete(course)
        try first.save()
        let lesson = Lesson()
        second.insert(lesson)
        lesson.course = seen
        if policy == .error {
            #expect(throws: EventGraphError.self) { try second.save() }
        } else {
            try second.save()
            let reader = container.newBackgroundContext()
            let lessons = try reader.fetch(FetchDescriptor<Lesson>())
            #expect(lessons.count == 1 && lessons[0].course == nil)
        }
        try container.close()
    }

    @Test func uniquenessIsEnforcedForASaveOfNewObjects() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let context = container.newBackgroundContext()
        for _ in 0..<2 {
            let course = Course()
            context.insert(course)
            course.code = "same"
        }
        #expect(throws: EventGraphError.self) { try context.save() }
        context.rollback()
        let course = Course()
        context.insert(course)
        course.code = "taken"
        try context.save()
        let other = container.newBackgroundContext()
        let clash = Course()
        other.insert(clash)
        clash.code = "taken"
        let lesson = Lesson()
        other.insert(lesson)
        lesson.course = clash
        #expect(throws: EventGraphError.self) { try other.save() }
        try container.close()
    }
}
