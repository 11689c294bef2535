import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A scan never reads a checkpoint chunk that cannot be loaded as holding no object: a fetch, a count by
/// predicate, a predicate scan (indexed or not) and a sorted fetch throw the chunk's error, which names the file,
/// the entity, the chunk and its byte offset; a read that fails fewer times than the retries is tried again and the
/// scan answers. Before, each of these silently left out the chunk's objects (or, for the slots an index found,
/// stopped on a precondition that named nothing).
@Suite("A scan over a checkpoint chunk that cannot be loaded")
struct ScanChunkFailureTests {
    /// What is wrong with the chunk.
    enum Failure: String, CustomStringConvertible, CaseIterable {
        /// A bit of its body flipped.
        case damaged
        /// Every read of it fails (EIO), past the retries.
        case unreadable

        var description: String { rawValue }
    }

    /// A container of the compacted 10,000-student store (three student chunks) in `directory` whose student
    /// chunk 1 is damaged or unreadable, and that chunk's directory entry.
    static func open(_ failure: Failure, in directory: TemporaryDirectory, faults: FaultInjector = FaultInjector())
        throws -> (ModelContainer, EntityChunkEntry)
    {
        let path = directory.file()
        try CheckpointChunkLayoutTests.compactedStore(at: path, studentCount: 10_000)
        let target: EntityChunkEntry
        switch failure {
        case .damaged:
            target = try CheckpointChunkLayoutTests.damageSecondStudentChunk(at: path)
        case .unreadable:
            let listed = try #require(try CheckpointChunkLayoutTests.directory(of: path))
            target = try #require(listed.entities.first { $0.chunks.count == 3 }).chunks[1]
            faults.failReads(1_000, at: target.byteOffset..<target.byteOffset + 1)
        }
        var configuration = ModelContainer.Configuration()
        configuration.faultInjector = faults
        return (try ModelContainer(path: path, model: TestModels.school, configuration: configuration), target)
    }

    /// Expects `body` to throw the error of student chunk 1 (`target`).
    static func expectChunkError(
        _ failure: Failure, _ target: EntityChunkEntry, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () throws -> Void
    ) {
        let error = #expect(throws: EventGraphError.self, sourceLocation: sourceLocation) { try body() }
        let message = error?.message ?? ""
        #expect(message.contains("chunk 1 of entity Student"), "\(message)", sourceLocation: sourceLocation)
        #expect(message.contains("byte offset \(target.byteOffset)"), "\(message)", sourceLocation: sourceLocation)
        #expect(error?.isFailedRead == (failure == .unreadable), sourceLocation: sourceLocation)
    }

    @Test(arguments: Failure.allCases) func aFetchOfEveryObjectThrows(_ failure: Failure) throws {
        let directory = TemporaryDirectory()
        let (container, target) = try Self.open(failure, in: directory)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        Self.expectChunkError(failure, target) { _ = try context.fetch(FetchDescriptor<Student>()) }
        // Sub-entities too, and a child context's fetch (which reads the rows beneath it).
        Self.expectChunkError(failure, target) { _ = try context.fetch(FetchDescriptor<Person>()) }
        Self.expectChunkError(failure, target) {
            _ = try context.makeChildContext().fetch(FetchDescriptor<Student>())
        }
    }

    @Test(arguments: Failure.allCases) func aSortedFetchThrows(_ failure: Failure) throws {
        let directory = TemporaryDirectory()
        let (container, target) = try Self.open(failure, in: directory)
        defer { try? container.close() }
        Self.expectChunkError(failure, target) {
            _ = try container.newBackgroundContext().fetch(FetchDescriptor<Student>(sortBy: [SortDescriptor(\.year)]))
        }
    }

    @Test(arguments: Failure.allCases) func aPredicateScanAndItsCountThrow(_ failure: Failure) throws {
        let directory = TemporaryDirectory()
        let (container, target) = try Self.open(failure, in: directory)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        // `year` has no index: the store filters its columns.
        let secondYear = FetchDescriptor<Student>(filter: .equal("year", .int16(2)))
        Self.expectChunkError(failure, target) { _ = try context.fetch(secondYear) }
        Self.expectChunkError(failure, target) { _ = try context.fetchCount(secondYear) }
        // A count without a predicate needs no chunk: the directory counts the chunk's objects.
        #expect(try context.fetchCount(FetchDescriptor<Student>()) == 10_000 - (0..<10_000).count { $0 % 7 == 3 })
    }

    @Test(arguments: Failure.allCases) func anIndexedPredicateThatFindsAnObjectInTheChunkThrows(_ failure: Failure)
        throws
    {
        let directory = TemporaryDirectory()
        let (container, target) = try Self.open(failure, in: directory)
        defer { try? container.close() }
        // `name` is indexed; student 5,000 is in chunk 1.
        Self.expectChunkError(failure, target) {
            _ = try container.newBackgroundContext().fetch(
                FetchDescriptor<Student>(filter: .equal("name", .string("student 5000"))))
        }
    }

    @Test func readsThatFailFewerTimesThanTheRetriesAreTriedAgainAndTheScanAnswers() throws {
        let directory = TemporaryDirectory()
        try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 10_000)
        let listed = try #require(try CheckpointChunkLayoutTests.directory(of: directory.file()))
        let target = try #require(listed.entities.first { $0.chunks.count == 3 }).chunks[1]
        let faults = FaultInjector()
        var configuration = ModelContainer.Configuration()
        configuration.faultInjector = faults
        let container = try ModelContainer(
            path: directory.file(), model: TestModels.school, configuration: configuration)
        defer { try? container.close() }

        faults.failReads(LazyColumnChunk.readRetryCount, at: target.byteOffset..<target.byteOffset + 1)
        let students = try container.newBackgroundContext().fetch(FetchDescriptor<Student>())
        #expect(students.count == 10_000 - (0..<10_000).count { $0 % 7 == 3 })
        #expect(faults.failedReadCount == LazyColumnChunk.readRetryCount)
        #expect(Set(students.map(\.name)).count == students.count)
    }

    /// The slots an attribute index found are handed out by a scan of their chunks: a chunk the lookups read, which
    /// the budget of decoded chunks evicted since, is read again to list its slots — and that read can fail.
    @Test func theSlotsAnIndexFoundInAChunkWhoseListingFailsThrow() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try StoredCheckpointIndexTests.compactedStore(at: path, count: 9_000)
        let faults = FaultInjector()
        var configuration = ModelContainer.Configuration()
        configuration.decodedChunkByteBudget = 1
        configuration.faultInjector = faults
        let container = try ModelContainer(
            path: path, model: StoredCheckpointIndexTests.model, configuration: configuration)
        defer { try? container.close() }
        let items = StoredCheckpointIndexTests.state(of: container).version(
            ofEntity: StoredCheckpointIndexTests.itemEntity)
        let first = try #require(items.checkpointChunk(at: 0))
        let second = try #require(items.checkpointChunk(at: 1))
        // Rank 40 is items 4,000-4,099: the end of chunk 0 and the start of chunk 1. The lookups read chunk 0, then
        // chunk 1 (which evicts chunk 0); chunk 0's reads fail from then on.
        let offset = first.entry.byteOffset
        faults.onRead { _, byteOffset in
            if byteOffset == offset, second.readCount > 0, faults.failedReadCount == 0 {
                faults.failReads(LazyColumnChunk.readRetryCount + 1, at: offset..<offset + 1)
            }
        }
        let error = #expect(throws: EventGraphError.self) {
            _ = try StoredCheckpointIndexTests.fetch(rank: 40, in: container.newBackgroundContext())
        }
        #expect(error?.isFailedRead == true)
        #expect(error?.message.contains("chunk 0 of entity IndexedItem") == true, "\(error?.message ?? "")")
        #expect(faults.failedReadCount == LazyColumnChunk.readRetryCount + 1)
        faults.onRead(nil)
        // Not kept: the same fetch answers once the reads succeed.
        #expect(
            try StoredCheckpointIndexTests.fetch(rank: 40, in: container.newBackgroundContext())
                == Set((4_000..<4_100).map(StoredCheckpointIndexTests.identity)))
    }

    @Test func aToManyRelationshipWhoseTargetsAreInADamagedChunkStopsNamingTheChunk() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let directory = TemporaryDirectory()
            let path = directory.file()
            let container = try ModelContainer(path: path, model: TestModels.school)
            let context = container.newBackgroundContext()
            let course = Course()
            context.insert(course)
            course.code = "A"
            for index in 0..<10_000 {
                let student = Student()
                context.insert(student)
                student.name = "student \(index)"
                student.courses = [course]
            }
            try context.save()
            _ = try container.compact()
            try container.close()
            try CheckpointChunkLayoutTests.damageSecondStudentChunk(at: path)
            let reopened = try ModelContainer(path: path, model: TestModels.school)
            let reader = reopened.newBackgroundContext()
            let fetched = try reader.fetch(FetchDescriptor<Course>())
            // A member whose chunk cannot be loaded must not read as deleted (its defaults): the read stops.
            for member in try #require(fetched.first).members { _ = member.name }
            withExtendedLifetime(reader) {}
        }
        let text = ChunkReadFailureTests.standardError(result)
        ChunkReadFailureTests.expectNamesTheChunk(text)
    }
}
