import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A compaction copies the checkpoint chunks that no commit changed since the last checkpoint as the file stores
/// them (their compressed bytes, verified again), instead of decoding and encoding their objects: the copy is what
/// an encode would write, byte for byte, and damage found in the stored bytes stops the compaction.
@Suite("Unchanged checkpoint chunks copied by a compaction")
struct UnchangedChunkCopyTests {
    static let studentEntity = LazyCheckpointLoadingTests.studentEntity

    @Test func unchangedChunksAreCopiedAndTheStoreReopensWithTheSameState() throws {
        let directory = TemporaryDirectory()
        try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 10_000)
        let keys = try LazyCheckpointLoadingTests.studentKeys(of: directory.file())
        let report: CompactionReport
        let names: [UInt64: String]
        do {
            let container = try ModelContainer(path: directory.file(), model: TestModels.school)
            defer { try? container.close() }
            // One student of the first of the three student chunks is renamed: that chunk is encoded, the other two
            // and the course chunk are copied.
            _ = try container.store.commit(LazyCheckpointLoadingTests.renaming(studentKey: keys[0]))
            report = try container.compact()
            #expect(report.encodedEntityChunkCount == 1)
            #expect(report.copiedEntityChunkCount == 3)
            #expect(report.stateDigest == (try container.stateDigest()))
            names = try DecodedChunkCacheTests.names(in: container)
        }
        // The new file replays from its bytes to the same digest, and a store opened on it reads the same values.
        #expect(try LazyCheckpointLoadingTests.fullReplayDigest(of: directory.file()) == report.stateDigest)
        let reopened = try ModelContainer(path: directory.file(), model: TestModels.school)
        defer { try? reopened.close() }
        #expect(try reopened.stateDigest() == report.stateDigest)
        #expect(try DecodedChunkCacheTests.names(in: reopened) == names)
        #expect(names[keys[0]] == "x")
        // Compacted again with no change: every chunk is copied.
        let again = try reopened.compact()
        #expect(again.encodedEntityChunkCount == 0)
        #expect(again.copiedEntityChunkCount == 4)
        #expect(again.stateDigest == report.stateDigest)
    }

    @Test func aCopiedChunkIsWhatAnEncodeWritesByteForByte() throws {
        let directory = TemporaryDirectory()
        try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 10_000)
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        defer { try? container.close() }
        let state = try LazyCheckpointLoadingTests.state(of: container).pinningCheckpointChunks()
        let plan = state.checkpointEntityChunkPlan(model: TestModels.school, nextKey: 1 << 40)
        #expect(plan.entityChunks.count == 4)
        #expect(plan.copiedEntityChunkCount == 4)
        let reader = try LogReader(path: directory.file())
        for index in plan.entityChunks.indices {
            let stored = try #require(plan.entityChunks[index].stored)
            // The stored frame's payload, decompressed, is the payload encoded from the decoded columns.
            let (_, payload) = try reader.readFrame(at: stored.entry.byteOffset)
            #expect(payload == (try plan.entityChunkPayload(index, model: TestModels.school).bytes))
            guard case .stored(let copied) = try plan.entityChunkContent(index, model: TestModels.school) else {
                Issue.record("chunk \(index) is not copied")
                continue
            }
            #expect(copied.entry == stored.entry)
        }
    }

    @Test func aChunkDamagedAfterItWasReadIsFoundAndNotCopied() throws {
        let directory = TemporaryDirectory()
        let (digest, _) = try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 10_000)
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        defer { try? container.close() }
        // Every chunk is read and stays decoded (the default budget), so the compaction does not read them again
        // to decode them: only the copy reads the stored bytes.
        _ = try DecodedChunkCacheTests.names(in: container)
        let boxes = DecodedChunkCacheTests.studentBoxes(of: container)
        #expect(boxes.count == 3 && boxes.allSatisfy(\.isDecoded))
        // A byte of the second student chunk's body flips on disk.
        let offset = boxes[1].entry.byteOffset + UInt64(FrameHeader.byteCount) + 10
        let handle = try #require(FileHandle(forUpdatingAtPath: directory.file()))
        try handle.seek(toOffset: offset)
        let byte = try #require(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: [byte ^ 0x20])
        try handle.close()
        #expect {
            try container.compact()
        } throws: { error in
            "\(error)".contains("byte offset \(boxes[1].entry.byteOffset)")
        }
        // The log was not replaced: the state is as it was.
        #expect(boxes.map(\.readCount) == [1, 1, 1])
        #expect(try container.stateDigest() == digest)
    }
}
