import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A context's property reads of objects whose slots read a checkpoint chunk through its box go through the context's
/// cache of the last chunks' columns (``CheckpointColumnsCache``): the box's lock is taken once per run of
/// reads of one chunk's objects, not once per read, and the values read are the chunk's own whatever the order.
@Suite("A context's cache of the last checkpoint chunks' columns")
struct CheckpointColumnsCacheTests {
    /// The compacted 10,000-student store (three student chunks) in `directory`, every student's name by key as the
    /// store's rows read them (not through a context: what the cache is checked against), and a container with a
    /// budget of `byteBudget` bytes of decoded chunks.
    static func openStore(
        in directory: TemporaryDirectory, byteBudget: Int, studentCount: Int = 10_000
    ) throws -> (expected: [UInt64: String], container: ModelContainer) {
        try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: studentCount)
        var expected: [UInt64: String] = [:]
        do {
            let unbounded = try DecodedChunkCacheTests.open(directory.file(), byteBudget: Int.max)
            defer { try? unbounded.close() }
            for key in try LazyCheckpointLoadingTests.studentKeys(of: directory.file()) {
                let row = try #require(
                    unbounded.store.committedRow(entityIndex: DecodedChunkCacheTests.studentEntity, key: key))
                guard case .attribute(.string(let name)) = row.values.value(at: DecodedChunkCacheTests.nameProperty)
                else { throw CancellationError() }
                expected[key] = name
            }
        }
        #expect(expected.count > 8_000 && Set(expected.values).count == expected.count)
        return (expected, try DecodedChunkCacheTests.open(directory.file(), byteBudget: byteBudget))
    }

    /// The store of ``openStore(in:byteBudget:)``, a context of it, every student fetched in that context, and the
    /// boxes of the students' chunks.
    struct Fetched {
        let expected: [UInt64: String]
        let container: ModelContainer
        let context: ObjectContext
        let students: [Student]
        let boxes: [LazyColumnChunk]
    }

    static func fetchEveryStudent(
        in directory: TemporaryDirectory, byteBudget: Int, studentCount: Int = 10_000
    ) throws -> Fetched {
        let (expected, container) = try openStore(in: directory, byteBudget: byteBudget, studentCount: studentCount)
        let context = container.newBackgroundContext()
        let students = try context.fetch(FetchDescriptor<Student>())
        let boxes = DecodedChunkCacheTests.studentBoxes(of: container)
        #expect(boxes.count >= 3)
        return Fetched(expected: expected, container: container, context: context, students: students, boxes: boxes)
    }

    /// The box of the checkpoint chunk that `object`'s slot reads through, if it reads one.
    static func box(of object: ManagedObject) -> LazyColumnChunk? {
        guard case .slot(let slot, _) = object.committed else { return nil }
        return slot.checkpointChunk
    }

    @Test func readingEveryObjectOfAFetchTakesEachChunksColumnsOnce() throws {
        let directory = TemporaryDirectory()
        let fetched = try Self.fetchEveryStudent(in: directory, byteBudget: Int.max)
        defer { try? fetched.container.close() }
        let (expected, context, students, boxes) = (fetched.expected, fetched.context, fetched.students, fetched.boxes)
        let takenBefore = boxes.map(\.columnsTakenCountForTests)
        var names: [UInt64: String] = [:]
        for student in students {
            #expect(Self.box(of: student) != nil)
            names[student.objectID.key] = student.name
            _ = student.year
        }
        #expect(names == expected)
        // Two properties of every student read (8,571 of the 10,000 are left): each chunk's columns taken from its box
        // once (through the box, once per read: 17,142 in all).
        #expect(zip(boxes, takenBefore).map { $0.columnsTakenCountForTests - $1 } == [1, 1, 1])
        #expect(context.checkpointColumns.heldChunkCount == 3)
    }

    @Test func readsThatAlternateBetweenChunksReadEachChunksOwnValues() throws {
        let directory = TemporaryDirectory()
        let fetched = try Self.fetchEveryStudent(in: directory, byteBudget: Int.max)
        defer { try? fetched.container.close() }
        let (expected, students, boxes) = (fetched.expected, fetched.students, fetched.boxes)
        let byChunk = boxes.map { box in students.filter { Self.box(of: $0) === box } }
        #expect(byChunk.map(\.count).allSatisfy { $0 > 1_000 })
        #expect(byChunk.map(\.count).reduce(0, +) == students.count)
        let takenBefore = boxes.map(\.columnsTakenCountForTests)
        // One object of each chunk in turn: three chunks, fewer than the entries, so each chunk's columns are taken
        // once and then found.
        for index in 0..<1_000 {
            for chunk in byChunk.indices {
                let student = byChunk[chunk][index]
                #expect(student.name == expected[student.objectID.key])
            }
        }
        #expect(zip(boxes, takenBefore).map { $0.columnsTakenCountForTests - $1 } == [1, 1, 1])
        #expect(fetched.context.checkpointColumns.heldChunkCount == 3)
    }

    @Test func moreChunksThanEntriesReplaceTheEntriesInTurn() throws {
        let directory = TemporaryDirectory()
        let fetched = try Self.fetchEveryStudent(in: directory, byteBudget: Int.max, studentCount: 30_000)
        defer { try? fetched.container.close() }
        let (expected, students, boxes) = (fetched.expected, fetched.students, fetched.boxes)
        #expect(boxes.count > CheckpointColumnsCache.entryCount)
        let byChunk = boxes.map { box in students.filter { Self.box(of: $0) === box } }
        #expect(byChunk.map(\.count).allSatisfy { $0 > 500 })
        let takenBefore = boxes.map(\.columnsTakenCountForTests)
        // One object of each chunk in turn, over more chunks than entries: each entry is replaced before its chunk
        // comes round again, so every read takes its chunk's columns — and reads that chunk's values.
        for index in 0..<500 {
            for chunk in byChunk.indices {
                let student = byChunk[chunk][index]
                #expect(student.name == expected[student.objectID.key])
            }
        }
        #expect(zip(boxes, takenBefore).allSatisfy { $0.columnsTakenCountForTests - $1 == 500 })
        #expect(fetched.context.checkpointColumns.heldChunkCount == CheckpointColumnsCache.entryCount)
        // Two reads of one object after the other: the second finds the chunk's columns.
        let last = try #require(byChunk.last?.last)
        _ = last.name
        let taken = try #require(boxes.last).columnsTakenCountForTests
        #expect(last.year == Int16(truncatingIfNeeded: (Int(last.name.dropFirst(8)) ?? -1) % 5))
        #expect(try #require(boxes.last).columnsTakenCountForTests == taken)
    }

    @Test func relationshipReadsOfACompactedStoreGoThroughTheCacheAndReadTheirTargets() throws {
        let directory = TemporaryDirectory()
        do {
            let container = try ModelContainer(path: directory.file(), model: TestModels.school)
            let context = container.newBackgroundContext()
            let courses = ["A", "B", "C"].map { code in
                let course = Course()
                context.insert(course)
                course.code = code
                return course
            }
            for index in 0..<3_000 {
                let student = Student()
                context.insert(student)
                student.name = "student \(index)"
                student.courses = [courses[index % 3]]
            }
            try context.save()
            _ = try container.compact()
            try container.close()
        }
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let students = try context.fetch(FetchDescriptor<Student>())
        #expect(students.count == 3_000)
        let boxes = DecodedChunkCacheTests.studentBoxes(of: container)
        let takenBefore = boxes.map(\.columnsTakenCountForTests)
        // A student's name, its course (a to-many read), the course's code (another entity's chunk): the reads
        // alternate between two chunks, and each is found after its first read.
        for student in students {
            let index = try #require(Int(student.name.dropFirst(8)))
            #expect(student.courses.map(\.code) == [["A", "B", "C"][index % 3]])
        }
        #expect(zip(boxes, takenBefore).allSatisfy { $0.columnsTakenCountForTests - $1 == 1 })
        #expect(context.checkpointColumns.heldChunkCount == boxes.count + 1)
    }

    @Test func theEntryKeepsItsChunkAcrossAnEvictionAndAResetDropsIt() throws {
        let directory = TemporaryDirectory()
        // A budget of one byte keeps only the chunk decoded last.
        let fetched = try Self.fetchEveryStudent(in: directory, byteBudget: 1)
        let (expected, container, context) = (fetched.expected, fetched.container, fetched.context)
        defer { try? container.close() }
        let (students, boxes) = (fetched.students, fetched.boxes)
        let first = boxes[0]
        let ofFirst = students.filter { Self.box(of: $0) === first }
        let ofSecond = students.filter { Self.box(of: $0) === boxes[1] }
        #expect(ofFirst[0].name == expected[ofFirst[0].objectID.key])
        #expect(first.isDecoded)
        let decodes = first.decodeCount

        // Another reader decodes the second chunk: the budget evicts the first, which the context's entry still holds.
        let row = try #require(
            container.store.committedRow(
                entityIndex: DecodedChunkCacheTests.studentEntity, key: ofSecond[0].objectID.key))
        #expect(
            row.values.value(at: DecodedChunkCacheTests.nameProperty)
                == .attribute(.string(expected[ofSecond[0].objectID.key] ?? "")))
        #expect(!first.isDecoded)
        for student in ofFirst.dropFirst() { #expect(student.name == expected[student.objectID.key]) }
        #expect(first.decodeCount == decodes)
        #expect(!first.isDecoded)

        // A reset drops the entry (and its columns).
        #expect(context.checkpointColumns.heldChunkCount == 1)
        context.reset()
        #expect(context.checkpointColumns.heldChunkCount == 0)
        // Another context reads the first chunk again: decoded again, the same values.
        let again = container.newBackgroundContext()
        let refetched = try again.fetch(FetchDescriptor<Student>()).filter { Self.box(of: $0) === first }
        for student in refetched { #expect(student.name == expected[student.objectID.key]) }
        #expect(first.decodeCount == decodes + 1)
    }
}
