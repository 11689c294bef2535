import Foundation
import LogFormat
import Synchronization
import Testing

@testable import EventGraph

/// Decoded checkpoint chunks live in a cache under a byte budget (``DecodedChunkCache``): objects and readers hold
/// a chunk's box, not its decoded columns, so an evicted chunk is read, verified and decoded again on the next touch,
/// with the same values, and damage found then is reported as on a first load.
@Suite("Decoded checkpoint chunks under a budget")
struct DecodedChunkCacheTests {
    static let studentEntity = LazyCheckpointLoadingTests.studentEntity
    static let nameProperty = LazyCheckpointLoadingTests.nameProperty

    /// A container of the compacted 10,000-student store at `path` (three student chunks) with a budget of
    /// `byteBudget` bytes of decoded chunks.
    static func open(_ path: String, byteBudget: Int) throws -> ModelContainer {
        var configuration = ModelContainer.Configuration()
        configuration.decodedChunkByteBudget = byteBudget
        return try ModelContainer(path: path, model: TestModels.school, configuration: configuration)
    }

    /// The boxes of the students' checkpoint chunks in the container's current version.
    static func studentBoxes(of container: ModelContainer) -> [LazyColumnChunk] {
        let students = LazyCheckpointLoadingTests.state(of: container).version(ofEntity: studentEntity)
        return (0..<students.chunkCount).compactMap { students.checkpointChunk(at: $0) }
    }

    /// Every student's name by key, read through fetched objects.
    static func names(in container: ModelContainer) throws -> [UInt64: String] {
        let context = container.newBackgroundContext()
        var names: [UInt64: String] = [:]
        for student in try context.fetch(FetchDescriptor<Student>()) {
            names[student.objectID.key] = student.name
        }
        return names
    }

    @Test func fetchedObjectsDoNotKeepEveryChunkDecodedAndReadTheSameValuesAfterEvictions() throws {
        let directory = TemporaryDirectory()
        let (_, studentCount) = try CheckpointChunkLayoutTests.compactedStore(
            at: directory.file(), studentCount: 10_000)
        let expected: [UInt64: String]
        do {
            let unbounded = try Self.open(directory.file(), byteBudget: Int.max)
            defer { try? unbounded.close() }
            expected = try Self.names(in: unbounded)
        }
        #expect(expected.count == studentCount)

        // A budget of one byte keeps only the chunk decoded last.
        let container = try Self.open(directory.file(), byteBudget: 1)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let students = try context.fetch(FetchDescriptor<Student>())
        let boxes = Self.studentBoxes(of: container)
        #expect(boxes.count == 3)
        // The fetched objects hold the boxes, not the decoded chunks: at most one is decoded while they are alive.
        #expect(boxes.count(where: \.isDecoded) <= 1)
        #expect(students.count == studentCount)
        // Read twice: each pass decodes the chunks again, in order, with the same values. (The context's cache of
        // the last chunks' columns would keep all three for the second pass, see `CheckpointColumnsCache`: it is
        // dropped before each, so that the reads go through the boxes.)
        for _ in 0..<2 {
            context.checkpointColumns.release()
            var names: [UInt64: String] = [:]
            for student in students { names[student.objectID.key] = student.name }
            #expect(names == expected)
        }
        // The fetch decoded the first chunk and only listed the others (no room for them): the first pass read
        // the first one decoded and decoded the others; the second pass decoded each again.
        #expect(boxes.allSatisfy { $0.readCount >= 2 })
        #expect(boxes.count(where: \.isDecoded) <= 1)
        let cache = try #require(boxes.first).cacheForTests
        #expect(cache.evictionCount >= 5)
        #expect(cache.chunkCount == 1)
        // A second fetch reads the same values too.
        #expect(try Self.names(in: container) == expected)
    }

    @Test func aFetchThenAReadOfEveryObjectDecodesEachChunkOnce() throws {
        let directory = TemporaryDirectory()
        try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 10_000)
        // A budget of one byte has room for one chunk only (the one decoded last).
        let container = try Self.open(directory.file(), byteBudget: 1)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let students = try context.fetch(FetchDescriptor<Student>())
        var names = 0
        for student in students where !student.name.isEmpty { names += 1 }
        #expect(names == students.count)
        let boxes = Self.studentBoxes(of: container)
        #expect(boxes.count == 3)
        // The fetch decodes the first chunk and only lists the slots of the others: each chunk's values are decoded
        // once, when its objects are read (decoding each in the fetch evicted it before its objects were read).
        #expect(boxes.map(\.decodeCount) == [1, 1, 1])
        #expect(boxes.allSatisfy { $0.readCount <= 2 })
        #expect(boxes.count(where: \.isDecoded) == 1)
    }

    @Test func aBudgetAboveTheStoreKeepsEveryChunkAfterOneRead() throws {
        let directory = TemporaryDirectory()
        try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 10_000)
        let container = try Self.open(directory.file(), byteBudget: 64 << 20)
        defer { try? container.close() }
        _ = try Self.names(in: container)
        _ = try Self.names(in: container)
        let boxes = Self.studentBoxes(of: container)
        #expect(boxes.allSatisfy { $0.readCount == 1 && $0.isDecoded })
        let cache = try #require(boxes.first).cacheForTests
        #expect(cache.evictionCount == 0)
        #expect(cache.byteCount > 0 && cache.byteCount <= 64 << 20)
    }

    @Test func aReaderKeepsItsVersionAcrossCommitsAndACompactionWhileItsChunksAreEvicted() throws {
        let directory = TemporaryDirectory()
        try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 10_000)
        let keys = try LazyCheckpointLoadingTests.studentKeys(of: directory.file())
        let container = try Self.open(directory.file(), byteBudget: 1)
        defer { try? container.close() }
        let old = LazyCheckpointLoadingTests.state(of: container).version(ofEntity: Self.studentEntity)
        let name = { (version: EntityColumns, key: UInt64) -> String in
            guard let row = try? version.lookUpCommittedRow(forKey: key) else { return "missing" }
            return "\(row.values.value(at: Self.nameProperty))"
        }
        let before = keys.map { name(old, $0) }
        #expect(!before.contains("missing"))

        // Commits rename a student of every chunk, then a compaction rewrites the file and renames it over the path.
        let renamed = [keys[0], keys[keys.count / 2], keys[keys.count - 1]]
        for key in renamed { _ = try container.store.commit(LazyCheckpointLoadingTests.renaming(studentKey: key)) }
        _ = try container.compact()
        let new = LazyCheckpointLoadingTests.state(of: container).version(ofEntity: Self.studentEntity)
        for key in renamed { #expect(name(new, key) == "\(PropertyValue.attribute(.string("x")))") }

        // The old version's chunks are evicted and read again from the file the store opened: the old values.
        #expect(keys.map { name(old, $0) } == before)
        #expect(keys.reversed().map { name(old, $0) } == before.reversed())
        let boxes = (0..<old.chunkCount).compactMap { old.checkpointChunk(at: $0) }
        #expect(boxes.count == 3)
        #expect(boxes.allSatisfy { $0.readCount >= 2 })
    }

    @Test func aCompactionReadsEachChunkOnceWhateverTheBudget() throws {
        let directory = TemporaryDirectory()
        let (digest, _) = try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 10_000)
        let container = try Self.open(directory.file(), byteBudget: 1)
        defer { try? container.close() }
        let boxes = Self.studentBoxes(of: container)
        #expect(try container.compact().stateDigest == digest)
        // Its plan and its digest read the chunks the copy it made holds, not the boxes again.
        #expect(boxes.map(\.readCount) == [1, 1, 1])
    }

    @Test func aCommitChangingSeveralChunksReadsEachOnceWhateverTheBudget() throws {
        let directory = TemporaryDirectory()
        try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 10_000)
        let keys = try LazyCheckpointLoadingTests.studentKeys(of: directory.file())
        let container = try Self.open(directory.file(), byteBudget: 1)
        defer { try? container.close() }
        let boxes = Self.studentBoxes(of: container)
        // One save renames a student of every chunk: loading the second chunk evicts the first, and so on, but the
        // commit holds them pinned until it is installed, so the install reads none of them again (a read that
        // could fail after the log already holds the transaction).
        let renamed = [keys[0], keys[keys.count / 2], keys[keys.count - 1]]
        var request = LazyCheckpointLoadingTests.renaming(studentKey: renamed[0])
        for key in renamed.dropFirst() {
            request.operations += LazyCheckpointLoadingTests.renaming(studentKey: key).operations
        }
        _ = try container.store.commit(request)
        #expect(boxes.map(\.readCount) == [1, 1, 1])
        // The pins are gone with the commit: the cache's evictions took effect, one chunk at most stays decoded.
        #expect(boxes.count(where: \.isDecoded) <= 1)
        let version = LazyCheckpointLoadingTests.state(of: container).version(ofEntity: Self.studentEntity)
        for key in renamed {
            let row = try #require(try version.lookUpCommittedRow(forKey: key))
            #expect(row.values.value(at: Self.nameProperty) == .attribute(.string("x")))
        }
    }

    @Test func aStateDigestReadsEachChunkOnceWhateverTheBudget() throws {
        let directory = TemporaryDirectory()
        let (digest, _) = try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 10_000)
        let container = try Self.open(directory.file(), byteBudget: 1)
        defer { try? container.close() }
        let boxes = Self.studentBoxes(of: container)
        #expect(try container.stateDigest() == digest)
        // The digest reads the chunks a pinning copy holds, as a compaction does, not the boxes again.
        #expect(boxes.map(\.readCount) == [1, 1, 1])
    }

    @Test func damageFoundWhenAnEvictedChunkIsReadAgainNamesTheChunk() throws {
        let directory = TemporaryDirectory()
        try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 10_000)
        let keys = try LazyCheckpointLoadingTests.studentKeys(of: directory.file())
        let container = try Self.open(directory.file(), byteBudget: 1)
        defer { try? container.close() }
        // Every chunk is read and found intact; all but the last are evicted.
        let context = container.newBackgroundContext()
        #expect(try context.fetch(FetchDescriptor<Student>()).count == keys.count)
        let boxes = Self.studentBoxes(of: container)
        #expect(!boxes[1].isDecoded)

        // The file is damaged under the open store (in place: the store reads through the descriptor it opened).
        let target = try CheckpointChunkLayoutTests.damageSecondStudentChunk(at: directory.file())
        let inDamaged = try #require(LazyCheckpointLoadingTests.damagedChunkKey(keys, target: target, in: container))
        LazyCheckpointLoadingTests.expectDamageReported(in: container, changingStudent: inDamaged, target: target)
        // The other chunks still read again as before.
        let first = try #require(container.store.committedRow(entityIndex: Self.studentEntity, key: keys[0]))
        #expect("\(first.values.value(at: Self.nameProperty))" == "\(PropertyValue.attribute(.string("student 0")))")
    }

    @Test func threadsReadingChunksThatEvictEachOtherSeeTheirValues() throws {
        let directory = TemporaryDirectory()
        try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 10_000)
        let keys = try LazyCheckpointLoadingTests.studentKeys(of: directory.file())
        let expected: [UInt64: String]
        do {
            let unbounded = try Self.open(directory.file(), byteBudget: Int.max)
            defer { try? unbounded.close() }
            expected = try Self.names(in: unbounded)
        }
        let container = try Self.open(directory.file(), byteBudget: 1)
        defer { try? container.close() }
        let store = container.store
        let barrier = ThreadBarrier(count: 6)
        let mismatches = Atomic<Int>(0)
        onThreads(6) { thread in
            barrier.arriveAndWait()
            // Each thread walks the keys in its own order (so the chunks evict each other under it), reading through
            // slots that hold the boxes; one thread also fetches every student through a context.
            let stride = thread + 1
            for index in Swift.stride(from: thread, to: keys.count, by: stride * 7) {
                let key = thread % 2 == 0 ? keys[index] : keys[keys.count - 1 - index]
                let row = store.committedRow(entityIndex: Self.studentEntity, key: key)
                let value = row.map { $0.values.value(at: Self.nameProperty) }
                if value != .attribute(.string(expected[key] ?? "")) { mismatches.add(1, ordering: .relaxed) }
            }
            if thread == 0 {
                let names = try? Self.names(in: container)
                if names != expected { mismatches.add(1, ordering: .relaxed) }
            }
        }
        #expect(mismatches.load(ordering: .relaxed) == 0)
        #expect(Self.studentBoxes(of: container).allSatisfy { $0.readCount >= 1 })
    }
}
