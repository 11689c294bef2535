import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A replayed insert whose key breaks the key-order rule (a key a checkpoint chunk's range includes: a deleted
/// object's, reused) makes the replay look the key up in that chunk (`EntityColumns.slot(forKey:)`, which ends the
/// process when the chunk cannot be loaded). It reads only a chunk the replay pinned first: `Replayer` loads and pins
/// the chunks that may hold any key a transaction's operations name, inserts included
/// (`StoreState.loadChunks(changedBy:)`), with the same candidates and guards as the lookup: a chunk that cannot be
/// read fails that throwing load (the open throws its error), and one read there is not read again, whatever the
/// budget of decoded chunks evicts. (Checked against a replay that does not pin an insert's chunks: it ends the
/// process.)
@Suite("A replayed insert of a key inside a checkpoint chunk's range reads only a pinned chunk")
struct ReplayedKeyOrderChunkTests {
    @Test func aReplayedInsertOfAReusedKeyReadsItsChunkOnce() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try CheckpointChunkLayoutTests.compactedStore(at: path, studentCount: 10_000)
        let live = Set(try LazyCheckpointLoadingTests.studentKeys(of: path))
        let faults = FaultInjector()
        var container = try ChunkReadFailureTests.open(path, faults: faults)
        let box = try #require(DecodedChunkCacheTests.studentBoxes(of: container).dropFirst().first)
        let reused = try #require((box.entry.minKey...box.entry.maxKey).first { !live.contains($0) })
        let (lastTransactionID, nextKey) = (container.lastTransactionID, container.store.state.withLock { $0.nextKey })
        try container.close()
        #expect(reused < nextKey)
        let writer = try LogWriter(path: path)
        let insert = Changeset(
            transactionID: lastTransactionID + 1, commitTimeMicroseconds: 0, author: "test", nextKey: nextKey,
            operations: [
                .insert(
                    ObjectReference(entityIndex: UInt32(ChunkReadFailureTests.studentEntity), key: reused),
                    [
                        PropertyChange(
                            propertyIndex: UInt32(LazyCheckpointLoadingTests.nameProperty),
                            value: .attribute(.string("reused")))
                    ])
            ])
        try writer.appendTransaction(id: insert.transactionID, payload: try insert.encoded())
        try writer.close()

        // Every read of the chunk fails: the replay's first look at it is the throwing load that pins it, so the
        // open throws the chunk's error (before, a lookup that could not throw would have ended the process).
        ChildContextChunkFailureTests.failEveryRead(of: box, after: 0, faults)
        ChildContextChunkFailureTests.expectChunk1Error(box) {
            try ChunkReadFailureTests.open(path, faults: faults).close()
        }
        #expect(faults.failedReadCount > 0)
        // The first read succeeds, every later one fails: the lookup reads the pinned chunk, not the file again.
        ChildContextChunkFailureTests.failEveryRead(of: box, after: 1, faults)
        container = try ChunkReadFailureTests.open(path, faults: faults)
        defer { try? container.close() }
        #expect(container.lastTransactionID == lastTransactionID + 1)
        let reopened = DecodedChunkCacheTests.studentBoxes(of: container).first { $0.entry == box.entry }
        #expect(reopened?.readCount == 1)
        ChildContextChunkFailureTests.stopFailingReads(faults)
        let context = container.newBackgroundContext()
        let students = try context.fetch(FetchDescriptor<Student>())
        #expect(students.first { $0.objectID.key == reused }?.name == "reused")
    }
}
