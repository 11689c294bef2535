import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A checkpoint chunk read again after the budget of decoded chunks evicted it can fail: a read that fails (an I/O
/// error) is tried again and not kept; damage is kept. A caller that can throw throws; a property getter and a
/// lookup by key cannot, and end the process naming the file, the entity, the chunk, its byte offset and the
/// property or key (as Core Data does when a fault cannot be fulfilled) rather than read null or absent.
@Suite("A checkpoint chunk whose read fails")
struct ChunkReadFailureTests {
    static let studentEntity = LazyCheckpointLoadingTests.studentEntity

    /// A container of the compacted 10,000-student store at `path` (three student chunks) with a budget of one byte
    /// of decoded chunks (only the chunk read last stays decoded), reading through `faults`.
    static func open(_ path: String, faults: FaultInjector) throws -> ModelContainer {
        var configuration = ModelContainer.Configuration()
        configuration.decodedChunkByteBudget = 1
        configuration.faultInjector = faults
        return try ModelContainer(path: path, model: TestModels.school, configuration: configuration)
    }

    /// The byte offsets at which reads of `box`'s frame header start (one read per try of the chunk).
    static func headerReads(of box: LazyColumnChunk) -> Range<UInt64> {
        box.entry.byteOffset..<box.entry.byteOffset + 1
    }

    /// A store whose student chunks were all read once, with chunk 1 evicted since; its keys and its boxes.
    static func storeWithAnEvictedChunk(at path: String, faults: FaultInjector) throws -> (
        ModelContainer, [UInt64], [LazyColumnChunk]
    ) {
        try CheckpointChunkLayoutTests.compactedStore(at: path, studentCount: 10_000)
        let keys = try LazyCheckpointLoadingTests.studentKeys(of: path)
        let container = try open(path, faults: faults)
        _ = try DecodedChunkCacheTests.names(in: container)
        let boxes = DecodedChunkCacheTests.studentBoxes(of: container)
        #expect(boxes.count == 3)
        #expect(!boxes[1].isDecoded)
        return (container, keys, boxes)
    }

    @Test func aReadThatFailsIsTriedAgainUpToThreeTimes() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        let (container, keys, boxes) = try Self.storeWithAnEvictedChunk(at: directory.file(), faults: faults)
        defer { try? container.close() }
        let key = try #require(keys.first { boxes[1].mayHold($0) })
        let readsBefore = boxes[1].readCount

        faults.failReads(LazyColumnChunk.readRetryCount, at: Self.headerReads(of: boxes[1]))
        let row = try #require(container.store.committedRow(entityIndex: Self.studentEntity, key: key))
        #expect(row.values.value(at: LazyCheckpointLoadingTests.nameProperty) != .attribute(.null))
        #expect(faults.failedReadCount == LazyColumnChunk.readRetryCount)
        #expect(boxes[1].readCount == readsBefore + LazyColumnChunk.readRetryCount + 1)
    }

    @Test func aReadThatKeepsFailingThrowsAndIsNotKept() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        let (container, keys, boxes) = try Self.storeWithAnEvictedChunk(at: directory.file(), faults: faults)
        defer { try? container.close() }
        let key = try #require(keys.first { boxes[1].mayHold($0) })

        // A commit that changes an object of the chunk throws the read's error, naming the chunk.
        faults.failReads(LazyColumnChunk.readRetryCount + 1, at: Self.headerReads(of: boxes[1]))
        let error = #expect(throws: EventGraphError.self) {
            _ = try container.store.commit(LazyCheckpointLoadingTests.renaming(studentKey: key))
        }
        #expect(error?.isFailedRead == true)
        let message = error?.message ?? ""
        #expect(message.contains("chunk 1 of entity Student"), "\(message)")
        #expect(message.contains("byte offset \(boxes[1].entry.byteOffset)"), "\(message)")
        #expect(message.contains(directory.file()), "\(message)")
        #expect(faults.failedReadCount == LazyColumnChunk.readRetryCount + 1)

        // Not kept: once the reads succeed again, the same commit goes through.
        #expect(throws: Never.self) {
            _ = try container.store.commit(LazyCheckpointLoadingTests.renaming(studentKey: key))
        }
    }

    @Test func damageIsKeptAndNotTriedAgain() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        let (container, keys, boxes) = try Self.storeWithAnEvictedChunk(at: directory.file(), faults: faults)
        defer { try? container.close() }
        let target = try CheckpointChunkLayoutTests.damageSecondStudentChunk(at: directory.file())
        let key = try #require(keys.first { boxes[1].mayHold($0) })
        let readsBefore = boxes[1].readCount
        for _ in 0..<2 {
            let error = #expect(throws: EventGraphError.self) {
                _ = try container.store.commit(LazyCheckpointLoadingTests.renaming(studentKey: key))
            }
            #expect(error?.isFailedRead == false)
            #expect(error?.message.contains("byte offset \(target.byteOffset)") == true)
        }
        #expect(boxes[1].readCount == readsBefore + 1)
    }

    /// The text an exit test's child wrote on standard error.
    static func standardError(_ result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }

    /// Expects `text` to name what a read that cannot be fulfilled names: the file, the entity, the chunk and its
    /// byte offset.
    static func expectNamesTheChunk(_ text: String) {
        #expect(text.contains("chunk 1 of entity Student (byte offset "), "\(text)")
        #expect(text.contains(".eglog: chunk 1"), "\(text)")
    }

    @Test func aGetterWhoseChunkReadKeepsFailingStopsNamingTheProperty() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let directory = TemporaryDirectory()
            let faults = FaultInjector()
            let (container, _, boxes) = try ChunkReadFailureTests.storeWithAnEvictedChunk(
                at: directory.file(), faults: faults)
            let students = try container.newBackgroundContext().fetch(FetchDescriptor<Student>())
            let student = try #require(students.first { boxes[1].mayHold($0.objectID.key) })
            _ = try boxes[0].load()  // evicts chunk 1 again
            faults.failReads(LazyColumnChunk.readRetryCount + 1, at: ChunkReadFailureTests.headerReads(of: boxes[1]))
            _ = student.name
        }
        let text = Self.standardError(result)
        #expect(text.contains("could not fulfill a read of property name of an object of entity Student"), "\(text)")
        #expect(text.contains("(errno 5)"), "\(text)")
        Self.expectNamesTheChunk(text)
    }

    @Test func aGetterWhoseChunkIsFoundDamagedStopsNamingTheProperty() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let directory = TemporaryDirectory()
            let (container, _, boxes) = try ChunkReadFailureTests.storeWithAnEvictedChunk(
                at: directory.file(), faults: FaultInjector())
            let students = try container.newBackgroundContext().fetch(FetchDescriptor<Student>())
            let student = try #require(students.first { boxes[1].mayHold($0.objectID.key) })
            _ = try boxes[0].load()  // evicts chunk 1 again
            try CheckpointChunkLayoutTests.damageSecondStudentChunk(at: directory.file())
            _ = student.year
        }
        let text = Self.standardError(result)
        #expect(text.contains("could not fulfill a read of property year of an object of entity Student"), "\(text)")
        Self.expectNamesTheChunk(text)
    }

    @Test func aLookupByKeyInAChunkThatCannotBeLoadedStopsInsteadOfFindingNothing() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let directory = TemporaryDirectory()
            try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 10_000)
            let keys = try LazyCheckpointLoadingTests.studentKeys(of: directory.file())
            let target = try CheckpointChunkLayoutTests.damageSecondStudentChunk(at: directory.file())
            let container = try ModelContainer(path: directory.file(), model: TestModels.school)
            let key = try #require(keys.first { $0 >= target.minKey && $0 <= target.maxKey })
            // Before, the object read as absent (deleted): `nil`, and the process went on.
            let id = ObjectID(storeUUID: container.storeUUID, entityName: "Student", key: key)
            _ = container.newBackgroundContext().object(with: id)
        }
        let text = Self.standardError(result)
        #expect(text.contains("could not fulfill a lookup of the object with key"), "\(text)")
        Self.expectNamesTheChunk(text)
    }

    /// A container of a compacted store of 9,000 indexed items (three entity chunks) in `directory` with chunk 1 of
    /// the items damaged, and with the first chunk of the stored attribute index damaged too when
    /// `damagingTheStoredIndex` (the entity's attribute index is then built from its chunks); and the damaged entity
    /// chunk's directory entry.
    static func openIndexedStoreWithADamagedChunk(in directory: TemporaryDirectory, damagingTheStoredIndex: Bool)
        throws -> (EntityChunkEntry, ModelContainer)
    {
        let path = directory.file()
        try StoredCheckpointIndexTests.compactedStore(at: path, count: 9_000)
        let listed = try #require(try CheckpointChunkLayoutTests.directory(of: path))
        let items = try #require(listed.entities.first)
        try #require(items.chunks.count == 3)
        try CheckpointChunkLayoutTests.flipBit(0x10, inBodyOf: items.chunks[1], at: 100, path: path)
        if damagingTheStoredIndex {
            let index = try #require(listed.indexes.first { $0.kind == .attribute })
            let file = try #require(FileHandle(forUpdatingAtPath: path))
            try file.seek(toOffset: index.chunks[0].byteOffset + 64)
            let byte = try #require(try file.read(upToCount: 1))
            try file.seek(toOffset: index.chunks[0].byteOffset + 64)
            try file.write(contentsOf: [byte[0] ^ 0x10])
            try file.close()
        }
        return (items.chunks[1], try ModelContainer(path: path, model: StoredCheckpointIndexTests.model))
    }

    static func expectNamesTheItemChunk(_ error: EventGraphError?, _ target: EntityChunkEntry) {
        let message = error?.message ?? ""
        #expect(message.contains("chunk 1 of entity IndexedItem"), "\(message)")
        #expect(message.contains("byte offset \(target.byteOffset)"), "\(message)")
    }

    @Test func anIndexBuiltFromChunksThrowsWhenOneCannotBeLoaded() throws {
        let directory = TemporaryDirectory()
        let (target, container) = try Self.openIndexedStoreWithADamagedChunk(
            in: directory, damagingTheStoredIndex: true)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        // Before, the index was built without the damaged chunk's objects: rank 50 (items 5000-5099, all in that
        // chunk) found nothing, as if they had been deleted.
        let error = #expect(throws: EventGraphError.self) {
            try StoredCheckpointIndexTests.fetch(rank: 50, in: context)
        }
        Self.expectNamesTheItemChunk(error, target)
        // Nothing was built: the index is still pending, and the next lookup meets the same error.
        #expect(container.store.state.withLock { $0.pendingAttributeIndexEntities.contains(0) })
        #expect(throws: EventGraphError.self) { try StoredCheckpointIndexTests.fetch(rank: 1, in: context) }
    }

    @Test func aUniqueLookupWhoseHolderIsInAChunkThatCannotBeLoadedThrows() throws {
        let directory = TemporaryDirectory()
        let (target, container) = try Self.openIndexedStoreWithADamagedChunk(
            in: directory, damagingTheStoredIndex: false)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        // Before, the holder's row read as absent: the fetch found no item 5000 (and a save would take its handle).
        let error = #expect(throws: EventGraphError.self) {
            try StoredCheckpointIndexTests.fetch(identity: StoredCheckpointIndexTests.identity(5_000), in: context)
        }
        Self.expectNamesTheItemChunk(error, target)
        // Items of the intact chunks are found as before.
        let found = try StoredCheckpointIndexTests.fetch(identity: StoredCheckpointIndexTests.identity(5), in: context)
        #expect(found.map(\.rank) == [0])
    }
}
