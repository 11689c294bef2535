import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A child context reads through its parent's unsaved changes to the store: for an object the parent changed or
/// deleted, it asks the store beneath whether the object is still committed there. When the checkpoint chunk that
/// holds the object was evicted and cannot be read again, a child's fetch, count and save throw the chunk's error
/// (naming the file, the entity, the chunk and its byte offset) and change nothing; once reads succeed, they answer.
/// Before, each of them ended the process (`fatalError` in the non-throwing lookup `ObjectStore.row(of:)`).
@Suite("A child context over a checkpoint chunk that cannot be read again")
struct ChildContextChunkFailureTests {
    /// A container of the compacted 10,000-student store whose student chunk 1 was read and evicted, a context of
    /// it that fetched every student, the student of that context whose row is in chunk 1, and the chunk's box.
    static func openWithAStudentOfChunk1(in directory: TemporaryDirectory, faults: FaultInjector) throws -> (
        ModelContainer, ObjectContext, Student, LazyColumnChunk
    ) {
        let (container, keys, boxes) = try ChunkReadFailureTests.storeWithAnEvictedChunk(
            at: directory.file(), faults: faults)
        let key = try #require(keys.first { boxes[1].mayHold($0) })
        let context = container.newBackgroundContext()
        let student = try #require(try context.fetch(FetchDescriptor<Student>()).first { $0.objectID.key == key })
        return (container, context, student, boxes[1])
    }

    /// Reads every student chunk again (the last one read stays decoded), so that chunk 1 is evicted.
    static func evictChunk1(of container: ModelContainer, _ box: LazyColumnChunk) throws {
        _ = try DecodedChunkCacheTests.names(in: container)
        #expect(!box.isDecoded)
    }

    /// Makes every try of the next read of `box` fail, past the retries.
    static func failNextRead(of box: LazyColumnChunk, _ faults: FaultInjector) {
        faults.failReads(LazyColumnChunk.readRetryCount + 1, at: ChunkReadFailureTests.headerReads(of: box))
    }

    /// Expects `body` to throw the failed read of student chunk 1 (`box`).
    static func expectChunk1Error(
        _ box: LazyColumnChunk, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) {
        let error = #expect(throws: EventGraphError.self, sourceLocation: sourceLocation) { try body() }
        let message = error?.message ?? ""
        #expect(error?.isFailedRead == true, sourceLocation: sourceLocation)
        #expect(message.contains("chunk 1 of entity Student"), "\(message)", sourceLocation: sourceLocation)
        #expect(message.contains("byte offset \(box.entry.byteOffset)"), "\(message)", sourceLocation: sourceLocation)
    }

    @Test func aChildsFetchOverAnObjectItsParentChangedThrows() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        let (container, parent, student, box) = try Self.openWithAStudentOfChunk1(in: directory, faults: faults)
        defer { try? container.close() }
        student.year = 9
        try Self.evictChunk1(of: container, box)
        let child = parent.makeChildContext()

        Self.failNextRead(of: box, faults)
        Self.expectChunk1Error(box) { _ = try child.fetch(FetchDescriptor<Student>()) }
        Self.failNextRead(of: box, faults)
        Self.expectChunk1Error(box) {
            _ = try child.fetch(FetchDescriptor<Student>(predicate: #Predicate { $0.year == 9 }))
        }
        #expect(child.registeredObjects.isEmpty)

        // A failed read is not kept: once reads succeed, the child sees the parent's change.
        let changed = try child.fetch(FetchDescriptor<Student>(predicate: #Predicate { $0.year == 9 }))
        #expect(changed.map(\.objectID) == [student.objectID])
    }

    @Test func aChildsCountOverAnObjectItsParentDeletedThrows() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        let (container, parent, student, box) = try Self.openWithAStudentOfChunk1(in: directory, faults: faults)
        defer { try? container.close() }
        let total = try parent.fetchCount(FetchDescriptor<Student>())
        parent.delete(student)
        try Self.evictChunk1(of: container, box)
        let child = parent.makeChildContext()

        Self.failNextRead(of: box, faults)
        Self.expectChunk1Error(box) { _ = try child.fetchCount(FetchDescriptor<Student>()) }
        #expect(try child.fetchCount(FetchDescriptor<Student>()) == total - 1)
    }

    @Test func aChildsSaveThatCannotLookAnObjectUpThrowsAndChangesNothing() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        let (container, parent, student, box) = try Self.openWithAStudentOfChunk1(in: directory, faults: faults)
        defer { try? container.close() }
        let name = student.name
        // The child reads the parent's row of the student (its values, not a slot of the chunk), and changes it.
        student.year = 9
        let child = parent.makeChildContext()
        let childStudent = try #require(
            try child.fetch(FetchDescriptor<Student>(predicate: #Predicate { $0.year == 9 })).first)
        childStudent.name = "renamed"
        try Self.evictChunk1(of: container, box)

        // The save compares the parent's row now with the one the child read: the parent's row needs to know
        // whether the student is still committed beneath, which reads chunk 1.
        Self.failNextRead(of: box, faults)
        Self.expectChunk1Error(box) { try child.save() }
        #expect(child.hasChanges)
        #expect(childStudent.name == "renamed")
        #expect(parent.updatedObjects.map(\.objectID) == [student.objectID])
        #expect(student.name == name)
        #expect(student.year == 9)

        // Once reads succeed, the same save goes through.
        try child.save()
        #expect(!child.hasChanges)
        #expect(student.name == "renamed")
        try parent.save()
        #expect(try DecodedChunkCacheTests.names(in: container)[student.objectID.key] == "renamed")
    }
}
