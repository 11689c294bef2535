import Foundation
import Testing

@testable import LogFormat

/// Salvaging a log with damage in synced data: everything verifiable is copied, the loss is reported exactly.
@Suite("Salvage")
struct SalvageTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("store.eglog") }
    var output: String { directory.file("salvaged.eglog") }

    @Test("a flipped bit in the middle loses exactly one transaction; the output opens and replays")
    func flippedBitInTheMiddle() throws {
        let appended = try TestLog.make(at: path, transactionCount: 20)
        try LogFileSurgery.flipBit(path, byteOffset: appended[9].byteOffset + 70, bit: 2)
        let damaged = try LogFileSurgery.bytes(of: path)
        try TestLog.expectWriterRefuses(path, damageAt: appended[9].byteOffset)

        let report = try Salvage.salvage(path: path, to: output)
        #expect(try LogFileSurgery.bytes(of: path) == damaged, "salvage never modifies its source")
        #expect(report.copiedTransactionCount == 19)
        #expect(report.lastTransactionID == 20)
        #expect(!report.isComplete)
        let region = try #require(report.lostRegions.first)
        #expect(report.lostRegions.count == 1)
        #expect(region.byteOffset == appended[9].byteOffset)
        #expect(region.byteCount == appended[9].endByteOffset - appended[9].byteOffset)
        #expect(region.transactionIDs == 10...10)
        #expect(region.reason.contains("checksum"))

        var replayed: [ReplayedTransaction] = []
        let writer = try LogWriter(path: output) { record in
            if case .transaction(let t) = record {
                replayed.append(ReplayedTransaction(id: t.transactionID, payload: try t.payload))
            }
        }
        #expect(replayed == TestLog.expected(1...9) + TestLog.expected(11...20))
        #expect(writer.recoveryReport.truncatedTail == nil)
        #expect(writer.header.storeUUID == (try LogReader(path: path).header.storeUUID))
        #expect(writer.header.fileUUID != (try LogReader(path: path).header.fileUUID))
        try writer.appendTransaction(id: 21, payload: TestLog.payload(for: 21))
        try writer.close()
        #expect(try Replay.read(output).transactions.last?.id == 21)
    }

    @Test("a zeroed sector loses the transactions it covered, named by ID")
    func zeroedSector() throws {
        let appended = try TestLog.make(at: path, transactionCount: 80)
        try LogFileSurgery.overwrite(path, at: 4096, with: [UInt8](repeating: 0, count: 4096))
        let first = try #require(appended.firstIndex { $0.endByteOffset > 4096 })
        let next = try #require(appended.firstIndex { $0.byteOffset >= 8192 })

        let report = try Salvage.salvage(path: path, to: output)
        let region = try #require(report.lostRegions.first)
        #expect(report.lostRegions.count == 1)
        #expect(region.byteOffset == appended[first].byteOffset)
        #expect(region.byteOffset + region.byteCount == appended[next].byteOffset)
        #expect(region.transactionIDs == UInt64(first + 1)...UInt64(next))
        let replay = try Replay.read(output)
        #expect(replay.transactions.map(\.id) == Array(1...UInt64(first)) + Array(UInt64(next + 1)...80))
        #expect(replay.report.endsWithSeal)
    }

    @Test("an intact log salvages completely, including its schema and checkpoint")
    func intactLog() throws {
        let writer = try LogWriter(path: path)
        let schema = SchemaPayload(modelName: "Salvage", versionIdentifier: "1", modelHash: 9, entities: [])
        try writer.append(schema: schema)
        for id in 1...5 as ClosedRange<UInt64> {
            try writer.appendTransaction(id: id, payload: TestLog.payload(for: id))
        }
        _ = try writer.rewrite(
            schema: schema,
            begin: CheckpointBegin(lastTransactionID: 3, lastCommitTimeMicroseconds: 0, nextKey: 1, objectCount: 0),
            end: CheckpointEnd(objectCount: 0, stateDigest: [7])
        ) { _ in }
        try writer.appendTransaction(id: 6, payload: TestLog.payload(for: 6), blobs: [[1, 2, 3]])
        try writer.close()

        let report = try Salvage.salvage(path: path, to: output)
        #expect(report.isComplete)
        #expect(report.copiedCheckpoint)
        #expect(report.copiedSchemaCount == 1)
        #expect(report.copiedTransactionCount == 3)
        let replay = try Replay.read(output)
        #expect(replay.transactions == TestLog.expected(4...6))
        let reader = try LogReader(path: output)
        var blob: [UInt8]?
        try reader.scan { record in
            if case .transaction(let t) = record, let location = t.blobs.first {
                blob = try reader.readBlob(at: location.byteOffset)
            }
        }
        #expect(blob == [1, 2, 3])
    }

    @Test("salvage refuses to overwrite an existing file")
    func existingOutput() throws {
        try TestLog.make(at: path, transactionCount: 1)
        try LogFileSurgery.write([1], to: output)
        let error = #expect(throws: LogFormatError.self) { _ = try Salvage.salvage(path: path, to: output) }
        #expect(error?.code == .invalidArgument)
        #expect(try LogFileSurgery.bytes(of: output) == [1])
    }
}
