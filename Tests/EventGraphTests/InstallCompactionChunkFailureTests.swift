import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// Deleting more than half of an entity's objects rewrites its chunks without the emptied slots
/// (`EntityColumns.remove(key:)` → `compact()`), while the commit is installed under the store's lock, after the
/// changeset is in the log. That rewrite never reads a checkpoint chunk still on disk: chunks the commit did not
/// touch stay as they are, and the resident ones are rewritten in place. Before, it read every chunk still on disk,
/// and one whose reads failed ended the process (`fatalError` under the lock) with the transaction already in the
/// log — and a replay of that transaction on the next open met the same chunk the same way.
@Suite("Deleting most objects of an entity whose chunks are partly on disk")
struct InstallCompactionChunkFailureTests {
    @Test func theDeletesInstallWithoutReadingTheChunksOnDisk() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        // 8,571 students in three chunks (4,096, 4,096, 379).
        try CheckpointChunkLayoutTests.compactedStore(at: path, studentCount: 10_000)
        let listed = try #require(try CheckpointChunkLayoutTests.directory(of: path))
        let chunks = try #require(listed.entities.first { $0.chunks.count == 3 }).chunks
        let last = chunks[2]
        let faults = FaultInjector()
        var configuration = ModelContainer.Configuration()
        configuration.faultInjector = faults
        let container = try ModelContainer(path: path, model: TestModels.school, configuration: configuration)
        defer { try? container.close() }
        // Every read of the last chunk fails: nothing this test does may read it.
        faults.failReads(1_000_000, at: last.byteOffset..<last.byteOffset + 1)

        // 6,000 students of the first two chunks: more than the 2,571 left, so the slots are rewritten.
        let keys = try LazyCheckpointLoadingTests.studentKeys(of: path).filter { $0 < last.minKey }.prefix(6_000)
        let context = container.newBackgroundContext()
        for key in keys {
            let id = ObjectID(storeUUID: container.storeUUID, entityName: "Student", key: key)
            context.delete(try #require(context.object(with: id)))
        }
        try context.save()
        let students = LazyCheckpointLoadingTests.state(of: container).version(
            ofEntity: LazyCheckpointLoadingTests.studentEntity)
        #expect(students.count == 8_571 - 6_000)
        #expect(students.unloadedChunkCount == 1, "the last chunk is still the checkpoint's, unread")
        #expect(students.checkpointChunk(at: 2)?.isLoaded == false)
        // The slots were rewritten when the 4,286th delete made the emptied slots outnumber the live objects: the
        // first two chunks hold fewer than their 8,192 slots.
        #expect(students.chunk(at: 0).slotCount + students.chunk(at: 1).slotCount < 8_192)

        // Once the chunk reads, the state is the one a full replay of the log builds.
        faults.failReads(0)
        let remaining = try container.newBackgroundContext().fetch(FetchDescriptor<Student>())
        #expect(remaining.count == 2_571)
        #expect(Set(remaining.map(\.objectID.key)).isDisjoint(with: keys))
        let digest = try container.stateDigest()
        try container.close()
        #expect(try LazyCheckpointLoadingTests.fullReplayDigest(of: path) == digest)
        let reopened = try ModelContainer(path: path, model: TestModels.school)
        defer { try? reopened.close() }
        #expect(try reopened.stateDigest() == digest)
    }
}
