import Foundation
import Testing

@testable import LogFormat

/// The golden file of named counters (sequence generators): changeset payload version 3 and checkpoint-begin
/// payload version 2 (`Docs/FileFormat-Payloads.md` §5.5, §5.7.1). It must decode, exactly, forever, and open for
/// appending. Written by ``writeGoldenFile()`` (`EG_WRITE_GOLDEN=counters`) only when it was added; never
/// regenerated.
@Suite("Golden file of named counters")
struct CounterGoldenFileTests {
    static let name = "v1.3-counters"

    /// Each transaction hands out one value, as EventGraph writes them: no operations, author `eventgraph.sequence`.
    static func changeset(_ id: UInt64) -> Changeset {
        let reservations: [UInt64: SequenceReservation] = [
            1: SequenceReservation(name: "studentID", lastValue: 1),
            2: SequenceReservation(name: "studentID", lastValue: 2),
            3: SequenceReservation(name: "roomID", lastValue: 1),
            4: SequenceReservation(name: "studentID", lastValue: 3),
        ]
        return Changeset(
            transactionID: id, commitTimeMicroseconds: 1_700_000_100_000_000 + Int64(id) * 1_000_000,
            author: "eventgraph.sequence", nextKey: 1, operations: [], sequenceReservations: [reservations[id]!])
    }

    /// A checkpoint of transactions 1 and 2: no objects, the counter `studentID` at 2.
    static var checkpointBegin: CheckpointBegin {
        var begin = CheckpointBegin(
            lastTransactionID: 2, lastCommitTimeMicroseconds: changeset(2).commitTimeMicroseconds, nextKey: 1,
            objectCount: 0)
        begin.sequenceReservations = [SequenceReservation(name: "studentID", lastValue: 2)]
        return begin
    }

    static let checkpointEnd = CheckpointEnd(objectCount: 0, stateDigest: (0..<32).map { UInt8(0xC0 &+ $0) })

    static var url: URL {
        get throws {
            try #require(
                Bundle.module.url(forResource: name, withExtension: "eglog", subdirectory: "Golden"),
                "Golden/\(name).eglog is missing from the test bundle")
        }
    }

    @Test("the golden file decodes to exactly its expected contents")
    func decode() throws {
        let reader = try LogReader(path: try Self.url.path)
        #expect(reader.header.storeUUID == GoldenFileTests.storeUUID)
        var descriptions: [String] = []
        var counters: [String: UInt64] = [:]
        try reader.scan { record throws in
            switch record {
            case .schema(let schema, _):
                #expect(schema == GoldenFileTests.schema)
                descriptions.append("schema")
            case .checkpointBegin(let begin, _):
                #expect(begin == Self.checkpointBegin)
                for reservation in begin.sequenceReservations { counters[reservation.name] = reservation.lastValue }
                descriptions.append("checkpoint-begin \(begin.lastTransactionID)")
            case .checkpointEnd(let end, _):
                #expect(end == Self.checkpointEnd)
                descriptions.append("checkpoint-end")
            case .transaction(let transaction):
                let payload = try transaction.payload
                descriptions.append("transaction \(transaction.transactionID) version \(payload.first ?? 0)")
                let changeset = try transaction.changeset()
                #expect(changeset == Self.changeset(transaction.transactionID))
                for reservation in changeset.sequenceReservations {
                    counters[reservation.name] = max(counters[reservation.name] ?? 0, reservation.lastValue)
                }
            case .seal:
                descriptions.append("seal")
            default:
                descriptions.append("unexpected \(record)")
            }
        }
        // The rewrite's seal, then the close's.
        #expect(
            descriptions == [
                "schema", "checkpoint-begin 2", "checkpoint-end", "transaction 3 version 3", "transaction 4 version 3",
                "seal", "seal",
            ])
        #expect(counters == ["studentID": 3, "roomID": 1])
    }

    @Test func aWriterOpensTheGoldenFileAndAppendsAfterIt() throws {
        let directory = TemporaryDirectory()
        let copy = directory.file("copy.eglog")
        try FileManager.default.copyItem(atPath: try Self.url.path, toPath: copy)
        let writer = try LogWriter(path: copy)
        #expect(writer.recoveryReport.truncatedTail == nil)
        let next = Changeset(
            transactionID: 5, commitTimeMicroseconds: 1_700_000_106_000_000, author: "eventgraph.sequence",
            nextKey: 1, operations: [], sequenceReservations: [SequenceReservation(name: "roomID", lastValue: 2)])
        try writer.appendTransaction(id: 5, payload: try next.encoded())
        try writer.close()
        var last: Changeset?
        try LogReader(path: copy).scan { record in
            if case .transaction(let transaction) = record { last = try transaction.changeset() }
        }
        #expect(last == next)
    }

    @Test(
        "write the counters golden file into the source tree",
        .enabled(if: ProcessInfo.processInfo.environment["EG_WRITE_GOLDEN"] == "counters"))
    func writeGoldenFile() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("golden.eglog")
        let writer = try LogWriter(path: path, options: LogWriter.Options(storeUUID: GoldenFileTests.storeUUID))
        try writer.append(schema: GoldenFileTests.schema)
        for id in 1...4 as ClosedRange<UInt64> {
            try writer.appendTransaction(id: id, payload: try Self.changeset(id).encoded())
        }
        _ = try writer.rewrite(schema: GoldenFileTests.schema, begin: Self.checkpointBegin, end: Self.checkpointEnd) {
            _ in
        }
        try writer.close()
        let destination = GoldenFileTests.goldenDirectory.appendingPathComponent("\(Self.name).eglog")
        try Data(try LogFileSurgery.bytes(of: path)).write(to: destination)
    }
}
