import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A stored index chunk reads by the rule of an entity chunk (``CheckpointChunkRead``): a read that fails (an I/O
/// error) is tried again and not kept, so a later lookup reads again; damage is kept.
@Suite("A stored index chunk whose read fails")
struct IndexChunkReadFailureTests {
    /// A container of a compacted store of 9,000 indexed items at `path`, reading through `faults`, and the first
    /// chunk of its stored uniqueness index (which holds item 0's identity, the smallest).
    static func open(_ path: String, faults: FaultInjector) throws -> (ModelContainer, CheckpointIndex, LazyIndexChunk)
    {
        var configuration = ModelContainer.Configuration()
        configuration.faultInjector = faults
        let container = try ModelContainer(
            path: path, model: StoredCheckpointIndexTests.model, configuration: configuration)
        let unique = try #require(StoredCheckpointIndexTests.state(of: container).storedUniqueIndexes.first)
        return (container, unique, try #require(unique.chunks.first))
    }

    /// The byte offsets at which reads of `chunk`'s frame header start (one read per try of the chunk).
    static func headerReads(of chunk: LazyIndexChunk) -> Range<UInt64> {
        chunk.entry.byteOffset..<chunk.entry.byteOffset + 1
    }

    static func firstItem(in container: ModelContainer) throws -> [Int64] {
        try StoredCheckpointIndexTests.fetch(
            identity: StoredCheckpointIndexTests.identity(0), in: container.newBackgroundContext()
        ).map(\.rank)
    }

    @Test func aReadThatFailsTwiceIsTriedAgainAndAnswers() throws {
        let directory = TemporaryDirectory()
        try StoredCheckpointIndexTests.compactedStore(at: directory.file(), count: 9_000)
        let faults = FaultInjector()
        let (container, unique, chunk) = try Self.open(directory.file(), faults: faults)
        defer { try? container.close() }

        faults.failReads(2, at: Self.headerReads(of: chunk))
        #expect(try Self.firstItem(in: container) == [0])
        #expect(faults.failedReadCount == 2)
        #expect(chunk.readCount == 3)
        // Answered from the stored chunk: before, the first failed read was kept as damage, and the index was
        // replaced by entries rebuilt from the entity's chunks.
        #expect(unique.replacement.entries == nil)
        #expect(unique.replacement.reportCount == 0)
    }

    @Test func aReadThatKeepsFailingThrowsAndIsNotKept() throws {
        let directory = TemporaryDirectory()
        try StoredCheckpointIndexTests.compactedStore(at: directory.file(), count: 9_000)
        let faults = FaultInjector()
        let (container, unique, chunk) = try Self.open(directory.file(), faults: faults)
        defer { try? container.close() }

        faults.failReads(CheckpointChunkRead.retryCount + 1, at: Self.headerReads(of: chunk))
        // Before, the failed read was kept as damage and the lookup answered from a rebuild of the entity's chunks.
        let error = #expect(throws: EventGraphError.self) { try Self.firstItem(in: container) }
        #expect(error?.isFailedRead == true)
        let message = error?.message ?? ""
        #expect(message.contains("chunk 0 of the uniqueness index (handle) of entity IndexedItem"), "\(message)")
        #expect(message.contains("byte offset \(chunk.entry.byteOffset)"), "\(message)")
        #expect(chunk.readCount == CheckpointChunkRead.retryCount + 1)
        #expect(unique.replacement.entries == nil)

        // Not kept: once reads succeed again, the next lookup reads the chunk and answers.
        #expect(try Self.firstItem(in: container) == [0])
        #expect(chunk.readCount == CheckpointChunkRead.retryCount + 2)
    }

    @Test func damageIsKeptAndNotReadAgain() throws {
        let directory = TemporaryDirectory()
        try StoredCheckpointIndexTests.compactedStore(at: directory.file(), count: 9_000)
        let listed = try #require(try CheckpointChunkLayoutTests.directory(of: directory.file()))
        let offset = try #require(listed.indexes.first { $0.kind == .unique }).chunks[0].byteOffset
        // One byte inside the chunk's body.
        let file = try #require(FileHandle(forUpdatingAtPath: directory.file()))
        try file.seek(toOffset: offset + 64)
        let byte = try #require(try file.read(upToCount: 1))
        try file.seek(toOffset: offset + 64)
        try file.write(contentsOf: [byte[0] ^ 0x5A])
        try file.close()
        let (container, _, chunk) = try Self.open(directory.file(), faults: FaultInjector())
        defer { try? container.close() }

        for _ in 0..<2 {
            let error = #expect(throws: EventGraphError.self) { _ = try chunk.load() }
            #expect(error?.isFailedRead == false)
            #expect(error?.message.contains("byte offset \(offset)") == true)
        }
        #expect(chunk.readCount == 1)
        // The lookup still answers, from the entity's chunks.
        #expect(try Self.firstItem(in: container) == [0])
    }
}
