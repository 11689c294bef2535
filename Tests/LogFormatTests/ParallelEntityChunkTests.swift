import Foundation
import Testing

@testable import LogFormat

/// `CheckpointSink.appendEntityChunks` and `appendIndexChunks` encode chunks on every core, a batch at a time, and
/// append them in order: the file reads exactly as one written a chunk at a time, over more than one batch and across
/// entities and indexes.
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

    /// Two stored indexes in 45 chunks (two batches of at most 32): entity 0's uniqueness index of an integer in 30
    /// chunks, entity 2's index of a string in 15, of 1 to 60 entries each.
    static let indexChunks: [(index: IndexChunks, chunks: [CheckpointIndexChunk])] = {
        let unique = IndexChunks(kind: .unique, entityIndex: 0, ownerEntityIndex: 0, ordinal: 0, arity: 1, chunks: [])
        let attribute = IndexChunks(
            kind: .attribute, entityIndex: 2, ownerEntityIndex: 2, ordinal: 0, arity: 1, chunks: [])
        var value: Int64 = 0
        func chunk(_ index: Int, text: Bool) -> CheckpointIndexChunk {
            CheckpointIndexChunk(
                arity: 1,
                entries: (0..<(1 + (index * 11) % 60)).map { _ in
                    value += 1
                    let attribute = text ? AttributeValue.string("title \(100_000 + value)") : .int64(value)
                    return CheckpointIndexEntry(values: [attribute], key: UInt64(value))
                })
        }
        return [
            (unique, (0..<30).map { chunk($0, text: false) }), (attribute, (0..<15).map { chunk($0, text: true) }),
        ]
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
                try sink.appendIndexChunks(indexChunks)
            } else {
                for chunk in chunks { try sink.appendEntityChunk(chunk) }
                for (index, chunks) in indexChunks {
                    for chunk in chunks { try sink.appendIndexChunk(chunk, of: index) }
                }
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
        // The stored indexes' chunks too (`appendIndexChunks`), listed in order with their first and last values.
        #expect(listed?.indexes.map(\.entityIndex) == [0, 2])
        #expect(listed?.indexes.map(\.chunks.count) == [30, 15])
        #expect(
            listed?.indexes.flatMap(\.chunks).map(\.entryCount)
                == Self.indexChunks.flatMap(\.chunks).map { UInt32($0.entries.count) })
        let frames = try FrameMap.frames(in: parallel)
        let expectedFrames = try FrameMap.frames(in: sequential)
        #expect(frames.map(\.byteOffset) == expectedFrames.map(\.byteOffset))
        #expect(frames.map(\.header.type) == expectedFrames.map(\.header.type))
        #expect(frames.filter { $0.header.type == .checkpointIndexChunk }.count == 45)
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
