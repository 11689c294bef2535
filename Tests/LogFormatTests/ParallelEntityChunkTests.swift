import Foundation
import Testing

@testable import LogFormat

/// `CheckpointSink.appendEntityChunks` encodes chunks on every core, a batch at a time, and appends them in order:
/// the file reads exactly as one written a chunk at a time, over more than one batch and across entities.
@Suite("Entity chunks encoded in parallel")
struct ParallelEntityChunkTests {
    /// 70 chunks (three batches of at most 32): entity 0 in 50 chunks, entity 2 in 20, of 1 to 40 objects each.
    static let chunks: [CheckpointChunk] = {
        var chunks: [CheckpointChunk] = []
        var key: UInt64 = 1
        for index in 0..<70 {
            let count = 1 + (index * 7) % 40
            chunks.append(
                CheckpointDirectoryTests.chunk(entity: index < 50 ? 0 : 2, firstKey: key, count: count))
            key += UInt64(count) + 3
        }
        return chunks
    }()

    static func compact(_ path: String, parallel: Bool) throws {
        let writer = try LogWriter(path: path)
        defer { try? writer.close() }
        try writer.append(schema: PayloadFixtures.schema)
        for id in 1...3 as ClosedRange<UInt64> {
            try writer.appendTransaction(id: id, payload: TestLog.payload(for: id))
        }
        _ = try writer.rewrite(
            schema: PayloadFixtures.schema, begin: CheckpointDirectoryTests.begin, end: CheckpointDirectoryTests.end
        ) { sink in
            if parallel {
                try sink.appendEntityChunks(chunks)
            } else {
                for chunk in chunks { try sink.appendEntityChunk(chunk) }
            }
        }
    }

    @Test func theFileReadsAsOneWrittenAChunkAtATime() throws {
        let directory = TemporaryDirectory()
        let parallel = directory.file("parallel.eglog")
        let sequential = directory.file("sequential.eglog")
        try Self.compact(parallel, parallel: true)
        try Self.compact(sequential, parallel: false)

        let (chunks, listed, report) = try CheckpointDirectoryTests.scan(parallel, deferring: false)
        #expect(chunks == Self.chunks)
        #expect(report.tail == .clean && report.lastTransactionID == 3)
        let (expectedChunks, expectedListed, _) = try CheckpointDirectoryTests.scan(sequential, deferring: false)
        #expect(chunks == expectedChunks)
        // Same frames at the same offsets (the files differ only in their headers' identities and seeds).
        #expect(listed == expectedListed)
        #expect(listed?.entities.map(\.entityIndex) == [0, 2])
        #expect(listed?.entities.map(\.chunks.count) == [50, 20])
        #expect(
            try FrameMap.frames(in: parallel).map(\.byteOffset) == FrameMap.frames(in: sequential).map(\.byteOffset))
    }

    /// A rewrite's re-read skips decoding entity chunk bodies but still checks their checksums: a flipped bit in one
    /// is damage to it, where a deferring scan (the store's open) sees a clean file.
    @Test func theChecksumReReadFindsAFlippedBitInAChunkBody() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("flipped.eglog")
        try Self.compact(path, parallel: true)
        let chunk = try #require(
            try FrameMap.frames(in: path).filter { $0.header.type == .checkpointEntityChunk }.dropFirst(40).first)
        try LogFileSurgery.flipBit(path, byteOffset: chunk.bodyByteOffset + 5, bit: 1)

        let checked = try LogReader(path: path).scanTyped(defersEntityChunkBodies: true, checksumsDeferredBodies: true)
        { _ in }
        guard case .damaged(let damage) = checked.tail else {
            Issue.record("the checksum re-read did not find the damage: \(checked.tail)")
            return
        }
        #expect(damage.byteOffset == chunk.byteOffset)
        #expect(try LogReader(path: path).scanTyped(defersEntityChunkBodies: true) { _ in }.tail == .clean)
    }
}
