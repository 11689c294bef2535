import Foundation
import Testing

@testable import LogFormat

/// A rewrite's re-read (`LogReader.verifyingScan`) checks the chunk bodies it defers and decodes the checkpoint
/// chunks on other threads (`ParallelScanChecks`): every damaged body and every chunk that does not decode is still
/// found, the first in file order is the one named, and the report is the one of the scan that checks each in place.
@Suite("A rewrite's re-read checks beside its scan")
struct ParallelScanChecksTests {
    /// A compacted file: 12 ordinary checkpoint chunks of entity 1, then 70 entity chunks and 45 index chunks
    /// (`ParallelEntityChunkTests`); and its frames.
    static func compactedFile(_ directory: TemporaryDirectory, _ name: String) throws -> (String, [FrameLayout]) {
        let path = directory.file(name)
        let writer = try LogWriter(path: path)
        defer { try? writer.close() }
        try writer.append(schema: PayloadFixtures.schema)
        try writer.appendTransaction(id: 3, payload: TestLog.payload(for: 3))
        _ = try writer.rewrite(
            schema: PayloadFixtures.schema, begin: CheckpointDirectoryTests.begin, end: CheckpointDirectoryTests.end
        ) { sink in
            for index in 0..<12 {
                try sink.append(
                    CheckpointDirectoryTests.chunk(entity: 1, firstKey: 1_000_000 + 100 * UInt64(index), count: 30))
            }
            try sink.appendEntityChunks(ParallelEntityChunkTests.chunks)
            try sink.appendIndexChunks(ParallelEntityChunkTests.indexChunks)
        }
        return (path, try FrameMap.frames(in: path))
    }

    static func isDeferred(_ frame: FrameLayout) -> Bool {
        frame.header.type == .checkpointEntityChunk || frame.header.type == .checkpointIndexChunk
    }

    /// Hands every deferred frame of `path` to checks that read `groupByteCount` bytes at a time; what `finish` says.
    static func checkBodies(_ path: String, frames: [FrameLayout], groupByteCount: Int) throws -> UInt64? {
        let reader = try LogReader(path: path)
        let file = SharedLogFile(try LogFile(path: path, flags: O_RDONLY, faults: nil))
        let checks = ParallelScanChecks(file: file, seed: reader.header.checksumSeed, groupByteCount: groupByteCount)
        for frame in frames where isDeferred(frame) {
            checks.checkBody(ofFrameAt: frame.byteOffset, header: frame.header)
        }
        return try checks.finish()
    }

    @Test(arguments: [1, 3_000, 40_000, ParallelScanChecks.defaultGroupByteCount])
    func aCleanFilesBodiesVerifyInGroupsOfAnySize(groupByteCount: Int) throws {
        let directory = TemporaryDirectory()
        let (path, frames) = try Self.compactedFile(directory, "clean.eglog")
        #expect(frames.filter(Self.isDeferred).count == 115)
        #expect(try Self.checkBodies(path, frames: frames, groupByteCount: groupByteCount) == nil)
    }

    /// Two damaged bodies far apart (different groups, checked on different threads in any order): the first in the
    /// file is named, whichever check ends first.
    @Test(arguments: [1, 3_000, 40_000, ParallelScanChecks.defaultGroupByteCount])
    func theFirstDamagedBodyInTheFileIsNamed(groupByteCount: Int) throws {
        let directory = TemporaryDirectory()
        let (path, frames) = try Self.compactedFile(directory, "damaged.eglog")
        let deferred = frames.filter(Self.isDeferred)
        let (first, second) = (deferred[17], deferred[100])
        try LogFileSurgery.flipBit(path, byteOffset: second.bodyByteOffset + 3, bit: 4)
        try LogFileSurgery.flipBit(path, byteOffset: first.bodyByteOffset + UInt64(first.header.bodyByteCount) - 1)
        #expect(try Self.checkBodies(path, frames: frames, groupByteCount: groupByteCount) == first.byteOffset)
    }

    /// A nonzero byte in a body's padding fails it as a flipped bit in the body does.
    @Test func aByteInAPaddingIsFound() throws {
        let directory = TemporaryDirectory()
        let (path, frames) = try Self.compactedFile(directory, "padding.eglog")
        let padded = try #require(
            frames.filter(Self.isDeferred).last {
                $0.header.frameByteCount > UInt64(FrameHeader.byteCount) + UInt64($0.header.bodyByteCount)
            })
        try LogFileSurgery.flipBit(path, byteOffset: padded.byteOffset + padded.header.frameByteCount - 1)
        #expect(try Self.checkBodies(path, frames: frames, groupByteCount: 3_000) == padded.byteOffset)
    }

    /// Frames handed over past the file's end (it shrank underneath the scan) fail, not pass unread.
    @Test func aBodyPastTheFilesEndFails() throws {
        let directory = TemporaryDirectory()
        let (path, frames) = try Self.compactedFile(directory, "shrunk.eglog")
        let last = try #require(frames.filter(Self.isDeferred).last)
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.truncate(atOffset: last.byteOffset + 100)
        try handle.close()
        #expect(try Self.checkBodies(path, frames: frames, groupByteCount: 40_000) == last.byteOffset)
    }

    /// Chunks that decode pass; of two that do not, the first in the file is named.
    @Test func theFirstChunkThatDoesNotDecodeIsNamed() throws {
        let directory = TemporaryDirectory()
        let (path, _) = try Self.compactedFile(directory, "decode.eglog")
        let file = SharedLogFile(try LogFile(path: path, flags: O_RDONLY, faults: nil))
        let checks = ParallelScanChecks(file: file, seed: 0)
        let good = try CheckpointDirectoryTests.chunk(entity: 1, firstKey: 1, count: 40).encoded()
        for index in 0..<20 { checks.decodeChunk(.whole(good), at: 1_000 * UInt64(index)) }
        checks.decodeChunk(.whole(Array(good.dropLast(3))), at: 12_000)
        checks.decodeChunk(.whole([0xFF] + good.dropFirst()), at: 7_000)
        #expect(try checks.finish() == 7_000)
        let clean = ParallelScanChecks(file: file, seed: 0)
        for index in 0..<20 { clean.decodeChunk(.whole(good), at: 1_000 * UInt64(index)) }
        #expect(try clean.finish() == nil)
    }

    /// The re-read's report: for a clean file the in-place scan's, with `progress` called for every record but the
    /// checkpoint chunks; for a damaged body of an entity or an index chunk, or of an ordinary chunk, the damage at
    /// that frame as the in-place scan reports it.
    @Test(arguments: [nil, 0, 11, 12, 52, 81, 82, 126] as [Int?])
    func theReportIsTheInPlaceScans(damagedFrame: Int?) throws {
        let directory = TemporaryDirectory()
        let (path, frames) = try Self.compactedFile(directory, "report.eglog")
        let chunkFrames = frames.filter { Self.isDeferred($0) || $0.header.type == .checkpointChunk }
        #expect(chunkFrames.count == 127)
        if let damagedFrame {
            try LogFileSurgery.flipBit(path, byteOffset: chunkFrames[damagedFrame].bodyByteOffset + 1, bit: 6)
        }
        var records: [LogRecord] = []
        let inPlace = try LogReader(path: path).scanTyped(defersEntityChunkBodies: true, checksumsDeferredBodies: true)
        { records.append($0) }
        var progressCount = 0
        let report = try LogReader(path: path).verifyingScan { progressCount += 1 }
        #expect(report == inPlace)
        guard let damagedFrame else {
            #expect(report.tail == .clean)
            #expect(progressCount == records.count - 12)
            return
        }
        guard case .damaged(let damage) = report.tail else {
            Issue.record("the re-read did not find the damage in chunk frame \(damagedFrame): \(report.tail)")
            return
        }
        #expect(damage.byteOffset == chunkFrames[damagedFrame].byteOffset)
    }
}
