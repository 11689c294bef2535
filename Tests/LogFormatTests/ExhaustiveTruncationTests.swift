import Foundation
import TestSupport
import Testing

@testable import LogFormat

/// A log cut at every byte offset reopens to exactly its committed prefix, read-only and for writing.
@Suite("Exhaustive truncation")
struct ExhaustiveTruncationTests {
    /// One committed unit of the generated log: where it ends and the transactions committed up to there.
    private struct CommitPoint {
        var endByteOffset: UInt64
        var transactionCount: Int
    }

    /// The cuts are split into shards that run in parallel (recovery's truncate + fdatasync dominates the time).
    static let shardCount = 4

    @Test(
        "a log of 210 transactions (fragments, blobs, compressed frames) cut at every byte offset",
        arguments: 0..<shardCount)
    func cutAtEveryOffset(shard: Int) throws {
        let started = ContinuousClock.now
        let directory = TemporaryDirectory(inMemory: true)
        let original = directory.file("original.eglog")
        let (transactions, commitPoints) = try makeLog(at: original)
        let bytes = try LogFileSurgery.bytes(of: original)
        #expect(transactions.count >= 200)
        #expect(commitPoints.last?.endByteOffset == UInt64(bytes.count))
        let lowestCut = UInt64(bytes.count * shard / Self.shardCount)
        let highestCut =
            shard == Self.shardCount - 1 ? UInt64(bytes.count) : UInt64(bytes.count * (shard + 1) / Self.shardCount) - 1

        let path = directory.file("cut.eglog")
        try LogFileSurgery.write(Array(bytes[..<Int(highestCut)]), to: path)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }

        var checkedCount = 0
        var pointIndex = commitPoints.count - 1
        for cut in stride(from: highestCut, through: lowestCut, by: -1) {
            try handle.truncate(atOffset: cut)
            guard cut >= LogFileHeader.framesByteOffset else {
                try expectRefused(path, cut: cut)
                continue
            }
            while commitPoints[pointIndex].endByteOffset > cut { pointIndex -= 1 }
            let point = commitPoints[pointIndex]
            let expectedTail: LogTail =
                cut == point.endByteOffset
                ? .clean
                : .torn(
                    TornTail(
                        byteOffset: point.endByteOffset, byteCount: cut - point.endByteOffset,
                        reason: ""))

            // Read-only: exactly the committed prefix, and the tail classified as torn (never as damage).
            let replay = try Replay.read(path)
            let expected = transactions.prefix(point.transactionCount)
            guard replay.transactions.elementsEqual(expected), sameTail(replay.report.tail, expectedTail) else {
                let message =
                    "cut at \(cut): got \(replay.transactions.count) transactions and \(replay.report.tail); expected "
                    + "\(expected.count) and a tail at \(point.endByteOffset)"
                Issue.record("\(message)")
                return
            }

            // For writing: recovery truncates to the end of the prefix, and the writer continues from there.
            do {
                let writer = try LogWriter(path: path, options: .init(durability: .none))
                let size = try LogFileSurgery.size(of: path)
                // A cut tail of zero bytes only (a seal's first bytes are zeros) reads as preallocated space (h54):
                // cut off, reported as such, not as a torn tail.
                let zeros =
                    cut > point.endByteOffset && bytes[Int(point.endByteOffset)..<Int(cut)].allSatisfy { $0 == 0 }
                guard size == point.endByteOffset,
                    writer.recoveryReport.truncatedTail?.byteOffset
                        == (cut == point.endByteOffset || zeros ? nil : point.endByteOffset),
                    writer.recoveryReport.trimmedPreallocationByteCount == (zeros ? cut - point.endByteOffset : 0),
                    writer.lastTransactionID == (expected.last?.id ?? 0)
                else {
                    let message =
                        "cut at \(cut): the writer left \(size) bytes (expected \(point.endByteOffset)), reported "
                        + "\(String(describing: writer.recoveryReport.truncatedTail)), last transaction "
                        + "\(writer.lastTransactionID)"
                    Issue.record("\(message)")
                    return
                }
            }
            // Put back what recovery cut off, for the next (one byte shorter) cut.
            if point.endByteOffset < cut {
                try handle.seek(toOffset: point.endByteOffset)
                try handle.write(contentsOf: Data(bytes[Int(point.endByteOffset)..<Int(cut)]))
            }
            checkedCount += 1
        }
        let expectedCount = (lowestCut...highestCut).count { $0 >= LogFileHeader.framesByteOffset }
        #expect(checkedCount == expectedCount)
        print(
            "exhaustive truncation, shard \(shard): cuts \(lowestCut)...\(highestCut) of a \(bytes.count)-byte log in \(ContinuousClock.now - started)"
        )
    }

    /// A file cut inside the 1 KiB header region is refused with a clear error, never read and never "repaired".
    private func expectRefused(_ path: String, cut: UInt64) throws {
        let readError = #expect(throws: LogFormatError.self, "cut at \(cut)") { _ = try LogReader(path: path) }
        #expect(
            readError?.code == .notALog || readError?.code == .damaged,
            "cut at \(cut): \(String(describing: readError))")
        let writeError = #expect(throws: LogFormatError.self, "cut at \(cut)") { _ = try LogWriter(path: path) }
        #expect(writeError?.code == .notALog || writeError?.code == .damaged)
        #expect(try LogFileSurgery.size(of: path) == cut)
    }

    private func sameTail(_ tail: LogTail, _ expected: LogTail) -> Bool {
        switch (tail, expected) {
        case (.clean, .clean): true
        case (.torn(let a), .torn(let b)): a.byteOffset == b.byteOffset && a.byteCount == b.byteCount
        default: false
        }
    }

    /// Writes a schema, 210 transactions and a seal; returns the transactions and every commit point in order.
    private func makeLog(at path: String) throws -> ([ReplayedTransaction], [CommitPoint]) {
        var options = LogWriter.Options()
        options.fragmentByteCount = 32
        let writer = try LogWriter(path: path, options: options)
        var points = [CommitPoint(endByteOffset: LogFileHeader.framesByteOffset, transactionCount: 0)]
        try writer.append(schema: SchemaPayload(modelName: "Cut", versionIdentifier: "1", modelHash: 7, entities: []))
        points.append(CommitPoint(endByteOffset: writer.byteCount, transactionCount: 0))

        var transactions: [ReplayedTransaction] = []
        var generator = SeededGenerator(seed: 0xC0FFEE)
        for id in 1...210 as ClosedRange<UInt64> {
            let payloadByteCount = id % 7 == 0 ? Int.random(in: 70...110, using: &generator) : Int(id % 17)
            let payload = TestBytes.random(payloadByteCount, using: &generator)
            var blobs: [[UInt8]] = []
            if id % 11 == 0 { blobs.append(TestBytes.random(Int(id % 23) + 1, using: &generator)) }
            if id % 13 == 0 { blobs.append(TestBytes.text(300)) }  // compressed
            let appended = try writer.appendTransaction(id: id, payload: payload, blobs: blobs)
            transactions.append(ReplayedTransaction(id: id, payload: payload))
            points.append(CommitPoint(endByteOffset: appended.endByteOffset, transactionCount: transactions.count))
        }
        try writer.close()
        points.append(
            CommitPoint(endByteOffset: try LogFileSurgery.size(of: path), transactionCount: transactions.count))

        // The log really has the shapes this test is about.
        let types = Set(try FrameMap.frames(in: path).map(\.header.type))
        #expect(
            types.isSuperset(of: [
                .schema, .transaction, .transactionFirst, .transactionMiddle, .transactionLast,
                .blob, .seal,
            ]))
        #expect(try FrameMap.frames(in: path).contains { $0.header.codec == .lz4 })
        return (transactions, points)
    }
}
