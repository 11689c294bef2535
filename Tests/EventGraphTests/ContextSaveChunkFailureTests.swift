import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A context's own save reads the committed values of the objects it changes or deletes — its validation, its
/// operations, a child's conflict check against its parent — and an object fetched from a checkpoint reads them from
/// a slot of a checkpoint chunk. When that chunk was evicted and cannot be read again, the save throws the chunk's
/// error (naming the file, the entity, the chunk and its byte offset) before it changes anything — the context keeps
/// its changes, the parent or the store has none of them — and the same save goes through once reads succeed; no
/// chunk stays pinned either way. Before, the first of those reads ended the process (`fatalError` in
/// `LazyColumnChunk.columns(readingProperty:)`, from `validationFailures` or `appendUpdate`).
@Suite("A context's own save over a checkpoint chunk that cannot be read again")
struct ContextSaveChunkFailureTests {
    typealias Helpers = ChildContextChunkFailureTests

    /// The change a test saves: of a student of chunk 1, in `context`.
    static func make(_ change: String, of student: Student, course: Course, in context: ObjectContext) {
        switch change {
        case "update": student.name = "changed"
        case "relate": student.courses.insert(course)
        default: context.delete(student)
        }
    }

    /// What the context lists as changed for `change` of `student` (`course` is the other side of a relation).
    static func expectListed(
        _ change: String, of student: Student, course: Course, in context: ObjectContext,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(context.hasChanges, sourceLocation: sourceLocation)
        let updated = Set(context.updatedObjects.map(\.objectID))
        let deleted = context.deletedObjects.map(\.objectID)
        switch change {
        case "update": #expect(updated == [student.objectID] && deleted.isEmpty, sourceLocation: sourceLocation)
        case "relate":
            #expect(updated == [student.objectID, course.objectID] && deleted.isEmpty, sourceLocation: sourceLocation)
        default: #expect(deleted == [student.objectID], sourceLocation: sourceLocation)
        }
    }

    /// Expects the store to hold `change` of the student with `key` (and of `course`), saved.
    static func expectSaved(
        _ change: String, key: UInt64, course: ObjectID, in container: ModelContainer,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let names = try DecodedChunkCacheTests.names(in: container)
        let reader = container.newBackgroundContext()
        let members = try #require(reader.object(with: course) as? Course).members.map(\.objectID.key)
        switch change {
        case "update": #expect(names[key] == "changed", sourceLocation: sourceLocation)
        case "relate": #expect(members.contains(key), sourceLocation: sourceLocation)
        default: #expect(names[key] == nil && !members.contains(key), sourceLocation: sourceLocation)
        }
    }

    /// Expects no student chunk to be pinned: a save that throws or ends lets go of every pin it took.
    static func expectNoPins(_ boxes: [LazyColumnChunk], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(boxes.map(\.pinCount) == Array(repeating: 0, count: boxes.count), sourceLocation: sourceLocation)
    }

    @Test(arguments: ["update", "relate", "delete"], ["a child", "a root context"])
    func aSaveThrowsAndChangesNothing(change: String, of kind: String) throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        let (container, _, boxes) = try ChunkReadFailureTests.storeWithAnEvictedChunk(
            at: directory.file(), faults: faults)
        defer { try? container.close() }
        let parent = container.newBackgroundContext()
        let context = kind == "a child" ? parent.makeChildContext() : parent
        let course = try #require(try context.fetch(FetchDescriptor<Course>()).first)
        let student = try #require(
            try context.fetch(FetchDescriptor<Student>()).first { boxes[1].mayHold($0.objectID.key) })
        let key = student.objectID.key
        Self.make(change, of: student, course: course, in: context)
        try Helpers.evictChunk1(of: container, boxes[1])
        let lastTransactionID = container.store.lastTransactionID

        Helpers.failEveryRead(of: boxes[1], after: 0, faults)
        Helpers.expectChunk1Error(boxes[1]) { try context.save() }
        Self.expectListed(change, of: student, course: course, in: context)
        #expect(container.store.lastTransactionID == lastTransactionID)
        if context !== parent {
            #expect(!parent.hasChanges)
            #expect(parent.registeredObjects.isEmpty)
        }
        Self.expectNoPins(boxes)

        // Once reads succeed, the same save goes through (a child's, then its parent's).
        Helpers.stopFailingReads(faults)
        try context.save()
        Self.expectNoPins(boxes)
        #expect(!context.hasChanges)
        if context !== parent {
            Self.expectListed(change, of: student, course: course, in: parent)
            try parent.save()
        }
        #expect(container.store.lastTransactionID == lastTransactionID + 1)
        try Self.expectSaved(change, key: key, course: course.objectID, in: container)
    }
}
