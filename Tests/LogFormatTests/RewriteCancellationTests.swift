import Foundation
import Testing

@testable import LogFormat

/// A rewrite asks for its checkpoint-end last (the caller's digest overlaps the chunks) and stops at its next check
/// once its ``RewriteCancellation`` is raised, leaving the old log untouched and no temporary file.
@Suite("Rewrite cancellation and a late checkpoint end")
struct RewriteCancellationTests {
    /// A log of three transactions, then a rewrite of it whose end is given as a closure; returns how many entity
    /// chunks the sink held when the end was asked for.
    static func compact(_ path: String, lateEnd: Bool) throws -> Int? {
        let writer = try LogWriter(path: path)
        defer { try? writer.close() }
        try writer.append(schema: PayloadFixtures.schema)
        for id in 1...3 as ClosedRange<UInt64> {
            try writer.appendTransaction(id: id, payload: TestLog.payload(for: id))
        }
        let chunksWhenAsked = LockedValue<Int?>(nil)
        let written = LockedValue(0)
        let write: (inout CheckpointSink) throws -> Void = { sink in
            try sink.appendEntityChunks(ParallelEntityChunkTests.chunks)
            written.withLock { $0 = sink.directory.entities.reduce(0) { $0 + $1.chunks.count } }
        }
        let prepared =
            lateEnd
            ? try writer.prepareRewrite(
                from: try writer.rewriteAnchor(), schema: PayloadFixtures.schema, begin: CheckpointDirectoryTests.begin,
                end: {
                    chunksWhenAsked.withLock { $0 = written.withLock { $0 } }
                    return CheckpointDirectoryTests.end
                }, writeCheckpoint: write)
            : try writer.prepareRewrite(
                from: try writer.rewriteAnchor(), schema: PayloadFixtures.schema, begin: CheckpointDirectoryTests.begin,
                end: CheckpointDirectoryTests.end, writeCheckpoint: write)
        _ = try writer.finishRewrite(prepared)
        return chunksWhenAsked.withLock { $0 }
    }

    /// Every record of a file with its frame offsets, as a tool reads it.
    static func records(of path: String) throws -> [String] {
        var records: [String] = []
        let report = try LogReader(path: path).scan { records.append("\($0)") }
        #expect(report.tail == .clean)
        return records
    }

    /// The end asked for once every chunk is written gives the file the end given up front gives: the same
    /// records at the same offsets.
    @Test func anEndAskedForLastWritesTheSameFile() throws {
        let directory = TemporaryDirectory()
        let late = directory.file("late.eglog")
        let early = directory.file("early.eglog")
        #expect(try Self.compact(late, lateEnd: true) == ParallelEntityChunkTests.chunks.count)
        #expect(try Self.compact(early, lateEnd: false) == nil)
        let lateRecords = try Self.records(of: late)
        #expect(lateRecords == (try Self.records(of: early)))
        #expect(lateRecords.contains { $0.hasPrefix("checkpointEnd") })
        #expect(
            try FrameMap.frames(in: late).map(\.byteOffset) == FrameMap.frames(in: early).map(\.byteOffset))
    }

    /// Raised while a chunk is made: the rewrite throws "closed", removes its temporary file, and the log
    /// is untouched and still the writer's (it appends and reopens with every transaction).
    @Test(arguments: [0, 32, 64])
    func aCancelledRewriteLeavesTheLogUntouched(raisedAt: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("cancelled.eglog")
        let writer = try LogWriter(path: path)
        try writer.append(schema: PayloadFixtures.schema)
        for id in 1...3 as ClosedRange<UInt64> {
            try writer.appendTransaction(id: id, payload: TestLog.payload(for: id))
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let cancellation = RewriteCancellation()
        let asked = LockedValue(0)
        #expect {
            _ = try writer.prepareRewrite(
                from: try writer.rewriteAnchor(), schema: PayloadFixtures.schema, begin: CheckpointDirectoryTests.begin,
                end: { CheckpointDirectoryTests.end }, cancellation: cancellation
            ) { sink in
                try sink.appendEntityChunks(
                    count: ParallelEntityChunkTests.chunks.count,
                    content: { (index, _) throws(LogFormatError) in
                        // Chunks are asked for a few ahead of the one written: raise the flag while one is made.
                        if index == raisedAt { cancellation.cancel() }
                        asked.withLock { $0 += 1 }
                        return .encoded(try EntityChunkPayload(ParallelEntityChunkTests.chunks[index]))
                    })
            }
        } throws: { error in
            (error as? LogFormatError)?.code == .closed
        }
        // The chunk that raised the flag is finished, and every one before it; none is asked for past the pipeline's
        // window (those taken by a worker before the flag was raised are finished too).
        #expect(
            (raisedAt + 1...min(raisedAt + OrderedPipeline.window, ParallelEntityChunkTests.chunks.count))
                .contains(asked.withLock { $0 }))
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names == ["cancelled.eglog"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        try writer.appendTransaction(id: 4, payload: TestLog.payload(for: 4))
        try writer.close()
        let report = try LogReader(path: path).scan { _ in }
        #expect(report.tail == .clean && report.lastTransactionID == 4)
    }
}
