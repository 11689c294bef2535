import Foundation
import Testing

@testable import LogFormat

/// A checkpoint chunk larger than one frame is written as checkpoint-chunk-first/-middle/-last fragments (format
/// 1.2) and read back, fragment by fragment, bounded by the file's transaction limit; every way such a chunk can be
/// cut or damaged is a torn tail or damage, never a crash.
@Suite("Checkpoint chunks larger than a frame")
struct CheckpointChunkFragmentTests {
    static let begin = CheckpointBegin(
        lastTransactionID: 2, lastCommitTimeMicroseconds: 1_700_000_000, nextKey: 99, objectCount: 2)
    static let end = CheckpointEnd(objectCount: 2, stateDigest: [1, 2, 3])
    static let blobReference = BlobReference(transactionID: 1, index: 0, byteCount: 3)

    /// Two objects, the first with a string of `byteCount` bytes.
    static func chunk(stringByteCount byteCount: Int) -> CheckpointChunk {
        let text = String(decoding: TestBytes.text(byteCount), as: UTF8.self)
        return CheckpointChunk(records: [
            ObjectRecord(
                object: PayloadFixtures.reference(0, 1),
                properties: [PropertyChange(propertyIndex: 0, value: .attribute(.string(text)))]),
            ObjectRecord(object: PayloadFixtures.reference(0, 2), properties: []),
        ])
    }

    /// Writes transactions 1...3, then rewrites the log with a checkpoint at transaction 2 holding `chunk` and a
    /// blob after it; transaction 3 is copied, and a seal ends the file.
    @discardableResult
    static func compact(
        _ path: String, chunk: CheckpointChunk, wholeChunkByteLimit: Int? = nil, fragmentByteCount: Int = 1 << 20,
        maxTransactionByteCount: Int = LogLimits.maxTransactionByteCount
    ) throws -> RewriteReport {
        var options = LogWriter.Options()
        options.fragmentByteCount = fragmentByteCount
        options.maxTransactionByteCount = maxTransactionByteCount
        let writer = try LogWriter(path: path, options: options)
        defer { try? writer.close() }
        try writer.append(schema: PayloadFixtures.schema)
        for id in 1...3 as ClosedRange<UInt64> {
            try writer.appendTransaction(id: id, payload: TestLog.payload(for: id), blobs: id == 1 ? [[7, 8, 9]] : [])
        }
        return try writer.rewrite(schema: PayloadFixtures.schema, begin: begin, end: end) { sink in
            if let wholeChunkByteLimit { sink.wholeChunkByteLimit = wholeChunkByteLimit }
            try sink.append(chunk)
            try sink.appendBlob(blobReference, bytes: [7, 8, 9])
        }
    }

    /// The chunks a read-only scan delivers, and how the scan ended.
    static func chunks(in path: String) throws -> (chunks: [CheckpointChunk], report: ScanReport) {
        var chunks: [CheckpointChunk] = []
        let report = try LogReader(path: path).scan { record in
            if case .checkpointChunk(let chunk, _) = record { chunks.append(chunk) }
        }
        return (chunks, report)
    }

    static func chunkFrames(in path: String) throws -> [FrameLayout] {
        try FrameMap.frames(in: path).filter {
            [.checkpointChunk, .checkpointChunkFirst, .checkpointChunkMiddle, .checkpointChunkLast].contains(
                $0.header.type)
        }
    }

    @Test func aChunkOfTwentyMebibytesIsSplitIntoFragmentsAndReadBack() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("large.eglog")
        let chunk = Self.chunk(stringByteCount: 20 << 20)
        try Self.compact(path, chunk: chunk)

        let count = (try chunk.encoded().count + (1 << 20) - 1) >> 20
        let frames = try Self.chunkFrames(in: path)
        #expect(
            frames.map(\.header.type)
                == [.checkpointChunkFirst] + Array(repeating: .checkpointChunkMiddle, count: count - 2)
                + [.checkpointChunkLast])
        #expect(frames.allSatisfy { $0.header.transactionID == Self.begin.lastTransactionID })
        #expect(frames.map(\.header.partIndex) == (0..<count).map(UInt32.init))
        let (chunks, report) = try Self.chunks(in: path)
        #expect(chunks == [chunk])
        #expect(report.tail == .clean)
        #expect(report.lastTransactionID == 3)
        // A writer of today reopens it and goes on.
        let writer = try LogWriter(path: path)
        #expect(writer.recoveryReport.truncatedTail == nil)
        try writer.appendTransaction(id: 4, payload: TestLog.payload(for: 4))
        try writer.close()
    }

    @Test(
        "a chunk is one frame up to the limit and fragments beyond it; salvage copies it",
        arguments: [100, 511, 512, 513, 1000, 5000])
    func fragmentsAroundTheLimit(stringByteCount: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("chunk.eglog")
        let chunk = Self.chunk(stringByteCount: stringByteCount)
        try Self.compact(path, chunk: chunk, wholeChunkByteLimit: 512, fragmentByteCount: 256)
        let payloadByteCount = try chunk.encoded().count
        let frames = try Self.chunkFrames(in: path)
        if payloadByteCount <= 512 {
            #expect(frames.map(\.header.type) == [.checkpointChunk])
        } else {
            #expect(frames.count == (payloadByteCount + 255) / 256)
            #expect(frames.first?.header.type == .checkpointChunkFirst)
            #expect(frames.last?.header.type == .checkpointChunkLast)
        }
        #expect(try Self.chunks(in: path).chunks == [chunk])

        let salvaged = directory.file("salvaged.eglog")
        let report = try Salvage.salvage(path: path, to: salvaged)
        #expect(report.isComplete && report.copiedCheckpoint)
        #expect(try Self.chunkFrames(in: salvaged).map(\.header.type) == frames.map(\.header.type))
        #expect(try Self.chunks(in: salvaged).chunks == [chunk])
    }

    @Test func everyTruncationInsideAFragmentedChunkIsATornTail() throws {
        let directory = TemporaryDirectory(inMemory: true)
        let original = directory.file("original.eglog")
        try Self.compact(
            original, chunk: Self.chunk(stringByteCount: 3000), wholeChunkByteLimit: 512,
            fragmentByteCount: 512)
        let frames = try FrameMap.frames(in: original)
        let begin = try #require(frames.first { $0.header.type == .checkpointBegin })
        let last = try #require(frames.first { $0.header.type == .checkpointChunkLast })
        let bytes = try LogFileSurgery.bytes(of: original)
        let path = directory.file("cut.eglog")
        for cut in stride(from: begin.endByteOffset, to: last.endByteOffset, by: 8) {
            try LogFileSurgery.write(Array(bytes[..<Int(cut)]), to: path)
            let (chunks, report) = try Self.chunks(in: path)
            #expect(chunks.isEmpty, "cut at \(cut)")
            #expect(report.tail.isTorn && report.tail.byteOffset == begin.byteOffset, "cut at \(cut): \(report.tail)")
        }
    }

    @Test(
        "a flipped bit in a fragment is damage at that fragment", arguments: [0, 1, 5] as [Int],
        ["header", "body"])
    func aFlippedBitIsDamage(fragment: Int, place: String) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("flipped.eglog")
        try Self.compact(
            path, chunk: Self.chunk(stringByteCount: 3000), wholeChunkByteLimit: 512,
            fragmentByteCount: 512)
        let frames = try Self.chunkFrames(in: path)
        try #require(frames.count == 6)
        let target = frames[fragment]
        try LogFileSurgery.flipBit(
            path, byteOffset: place == "header" ? target.byteOffset + 9 : target.bodyByteOffset + 3, bit: 2)
        let (chunks, report) = try Self.chunks(in: path)
        #expect(chunks.isEmpty)
        #expect(report.tail.damage?.byteOffset == target.byteOffset, "\(report.tail)")
        try TestLog.expectWriterRefuses(path, damageAt: target.byteOffset)
    }

    @Test(
        "fragments out of order or unfinished break the grammar",
        arguments: ["last fragment relabelled middle", "fragment index skipped", "first fragment repeated"])
    func brokenGrammarIsDamage(change: String) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("grammar.eglog")
        try Self.compact(
            path, chunk: Self.chunk(stringByteCount: 3000), wholeChunkByteLimit: 512,
            fragmentByteCount: 512)
        let frames = try Self.chunkFrames(in: path)
        var failing = frames[2]
        var header = failing.header
        switch change {
        case "last fragment relabelled middle":
            failing = frames[frames.count - 1]
            header = failing.header
            header.type = .checkpointChunkMiddle
        case "fragment index skipped":
            header.partIndex = 3
        default:
            header.type = .checkpointChunkFirst
            header.partIndex = 0
        }
        try FrameMap.rewriteHeader(path, at: failing.byteOffset, header)
        let (chunks, report) = try Self.chunks(in: path)
        #expect(chunks.isEmpty)
        // An unfinished run fails at the first frame after it (the blob); the others at the frame itself.
        let expected =
            change == "last fragment relabelled middle" ? failing.endByteOffset : failing.byteOffset
        #expect(report.tail.damage?.byteOffset == expected, "\(report.tail)")
    }

    @Test func aChunkOverTheFilesTransactionLimitIsRefusedWhenWritten() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("limited.eglog")
        let error = #expect(throws: LogFormatError.self) {
            try Self.compact(path, chunk: Self.chunk(stringByteCount: 5000), maxTransactionByteCount: 4096)
        }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message.contains("limit of 4096 bytes") == true, "\(String(describing: error))")
        let replay = try Replay.read(path)
        #expect(replay.transactions.map(\.id) == [1, 2, 3], "the log was left as it was")
        #expect(replay.report.tail == .clean)
    }

    @Test func fragmentsPastTheFilesLimitFailAtTheFragmentThatPassesIt() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("forged.eglog")
        try Self.compact(
            path, chunk: Self.chunk(stringByteCount: 3000), wholeChunkByteLimit: 512,
            fragmentByteCount: 512)
        let frames = try Self.chunkFrames(in: path)
        // A header that records a limit of 1,200 bytes: the third fragment of 512 passes it.
        try LogFileSurgery.forgeHeaderField(path, at: 88, LogFileSurgery.littleEndian(UInt32(1200)))
        let (chunks, report) = try Self.chunks(in: path)
        #expect(chunks.isEmpty)
        #expect(report.tail.damage?.byteOffset == frames[2].byteOffset, "\(report.tail)")
        #expect(report.tail.damage?.reason.contains("limit of 1200") == true, "\(report.tail)")
    }
}
