import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// The change feed replays the log into a state of its own, whose checkpoint chunks stay on disk until touched: the
/// old values of an object that a transaction after the checkpoint changes are read from its chunk. A chunk that
/// cannot be loaded then makes ``ModelContainer/changes(after:)`` throw its error. Before, the old values were read
/// through a lookup that cannot throw, and the process ended (`fatalError`).
@Suite("The change feed over a checkpoint chunk that cannot be loaded")
struct ChangeFeedChunkFailureTests {
    @Test func readingTheOldValuesThrowsTheChunksError() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try CheckpointChunkLayoutTests.compactedStore(at: path, studentCount: 10_000)
        let keys = try LazyCheckpointLoadingTests.studentKeys(of: path)
        let listed = try #require(try CheckpointChunkLayoutTests.directory(of: path))
        let target = try #require(listed.entities.first { $0.chunks.count == 3 }).chunks[1]
        let key = try #require(keys.first { $0 >= target.minKey && $0 <= target.maxKey })
        let container = try ModelContainer(path: path, model: TestModels.school)
        defer { try? container.close() }
        let checkpointed = container.lastTransactionID
        let context = container.newBackgroundContext()
        let id = ObjectID(storeUUID: container.storeUUID, entityName: "Student", key: key)
        let student = try #require(context.object(with: id) as? Student)
        student.name = "renamed"
        try context.save()
        #expect(try container.changes(after: checkpointed).count == 1)

        // The chunk on disk is damaged after the store read it: the feed's own replay meets the damage.
        _ = try CheckpointChunkLayoutTests.damageSecondStudentChunk(at: path)
        let error = #expect(throws: EventGraphError.self) { _ = try container.changes(after: checkpointed) }
        let message = error?.message ?? ""
        #expect(message.contains("chunk 1 of entity Student"), "\(message)")
        #expect(message.contains("byte offset \(target.byteOffset)"), "\(message)")
    }
}
