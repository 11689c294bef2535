import Foundation
import Testing

@testable import LogFormat

/// egctl's replay scans with `defersTransactionDecompression` (the LZ4 blocks of transaction frames decompressed
/// once, by each transaction's decoding, off the replaying thread) and replays again with a verifying scan when
/// that pass fails: every output must be the verifying scan's, above all for a frame whose checksum holds but whose
/// LZ4 block does not decompress (`Docs/FileFormat.md`, recovery: damage or a torn tail at that frame).
@Suite("egctl's replay leaves transaction frames compressed for their decoding, with the verifying scan's results")
struct EgctlDeferredDecompressionTests {
    /// A changeset inserting one `Item` whose name compresses (so its frames are LZ4).
    static func compressible(_ id: UInt64) -> Changeset {
        Changeset(
            transactionID: id, commitTimeMicroseconds: 1_700_000_000_000_000 + Int64(id), author: "crafted",
            nextKey: id + 1,
            operations: [
                .insert(
                    ObjectReference(entityIndex: 0, key: id),
                    [
                        PropertyChange(
                            propertyIndex: 0, value: .attribute(.string(String(repeating: "item \(id) ", count: 200))))
                    ])
            ])
    }

    /// Transaction `id` in one frame; its LZ4 block undecompressible when asked.
    static func whole(_ log: inout CraftedLog, _ id: UInt64, undecompressible: Bool = false) throws {
        let frame = OutgoingFrame(type: .transaction, transactionID: id, payload: try compressible(id).encoded())
        if undecompressible { try log.appendUndecompressible(frame) } else { try log.append(frame) }
    }

    /// Transaction `id` in three fragments, fragment `undecompressible` (if any) with a bad LZ4 block; only the
    /// first `count` fragments are written.
    static func fragments(_ log: inout CraftedLog, _ id: UInt64, undecompressible: Int? = nil, count: Int = 3) throws {
        let payload = try compressible(id).encoded()
        let third = payload.count / 3
        let parts = [Array(payload[..<third]), Array(payload[third..<2 * third]), Array(payload[(2 * third)...])]
        for (index, part) in parts.enumerated().prefix(count) {
            let frame = OutgoingFrame(
                type: FragmentKind.transaction.type(ofFragment: index, count: parts.count), transactionID: id,
                partIndex: UInt32(index), payload: part)
            if index == undecompressible { try log.appendUndecompressible(frame) } else { try log.append(frame) }
        }
    }

    struct Case: CustomStringConvertible, Sendable {
        var name: String
        /// Whether a frame with a bad LZ4 block is among the committed or attempted frames.
        var hasBadBlock = true
        var build: @Sendable () throws -> CraftedLog
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(name: "a good log", hasBadBlock: false) {
            var log = CraftedLog()
            try log.appendSchema()
            try whole(&log, 1)
            try fragments(&log, 2)
            try whole(&log, 3)
            try log.appendSeal()
            return log
        },
        Case(name: "a whole transaction frame with a bad LZ4 block, frames after it (damage)") {
            var log = CraftedLog()
            try log.appendSchema()
            try whole(&log, 1)
            try whole(&log, 2, undecompressible: true)
            try whole(&log, 3)
            try log.appendSeal()
            return log
        },
        Case(name: "the last frame a whole transaction with a bad LZ4 block (nothing after it)") {
            var log = CraftedLog()
            try log.appendSchema()
            try whole(&log, 1)
            try whole(&log, 2, undecompressible: true)
            return log
        },
        Case(name: "a middle fragment with a bad LZ4 block, frames after it") {
            var log = CraftedLog()
            try log.appendSchema()
            try whole(&log, 1)
            try fragments(&log, 2, undecompressible: 1)
            try whole(&log, 3)
            try log.appendSeal()
            return log
        },
        Case(name: "the last fragment with a bad LZ4 block, at the end of the file") {
            var log = CraftedLog()
            try log.appendSchema()
            try whole(&log, 1)
            try fragments(&log, 2, undecompressible: 2)
            return log
        },
        Case(name: "a first fragment with a bad LZ4 block, the file ending inside its transaction") {
            var log = CraftedLog()
            try log.appendSchema()
            try whole(&log, 1)
            try fragments(&log, 2, undecompressible: 0, count: 2)
            return log
        },
        Case(name: "a whole transaction frame with a bad LZ4 block inside a run of fragments (the grammar refuses it)")
        {
            var log = CraftedLog()
            try log.appendSchema()
            try whole(&log, 1)
            try fragments(&log, 2, count: 1)
            try whole(&log, 2, undecompressible: true)
            try whole(&log, 3)
            try log.appendSeal()
            return log
        },
    ]

    /// The output without its timings (seconds, MB/s).
    static func normalized(_ text: String) -> String {
        text.replacingOccurrences(of: "[0-9]+\\.[0-9]+", with: "#", options: .regularExpression)
    }

    @Test("every command's output, exit status and classification are the verifying scan's", arguments: cases)
    func sameResults(_ crafted: Case) throws {
        let scratch = Scratch()
        let path = scratch.file("crafted.eglog")
        try crafted.build().write(to: path)
        let commands = [
            ["replay", path, "--summary"], ["replay", path, "--summary", "--json"], ["replay", path, "--until", "1"],
            ["verify", path], ["inspect", path],
        ]
        for arguments in commands {
            let deferring = try Egctl.run(arguments)
            let verifying = try Egctl.run(arguments, environment: ["EGCTL_DEFER_DECOMPRESSION": "0"])
            let command = arguments.filter { $0 != path }.joined(separator: " ")
            #expect(deferring.status == verifying.status, "\(command)")
            #expect(Self.normalized(deferring.stdout) == Self.normalized(verifying.stdout), "\(command)")
            #expect(Self.normalized(deferring.stderr) == Self.normalized(verifying.stderr), "\(command)")
        }
        let replay = try Egctl.run(["replay", path, "--summary"])
        #expect(
            (replay.stdout + replay.stderr).contains("LZ4 block does not decompress") == crafted.hasBadBlock,
            "\(replay.stdout)\(replay.stderr)")
    }

    @Test("a deferring scan delivers whole transaction frames compressed; decoded, they are the verifying scan's")
    func deliversCompressedBodies() throws {
        let scratch = Scratch()
        let path = scratch.file("good.eglog")
        try Self.cases[0].build().write(to: path)
        let reader = try LogReader(path: path)
        var deferred: [TransactionRecord] = []
        let deferredReport = try reader.scan(defersTransactionDecompression: true) { record in
            if case .transaction(let transaction) = record { deferred.append(transaction) }
        }
        var verified: [TransactionRecord] = []
        let verifiedReport = try reader.scan { record in
            if case .transaction(let transaction) = record { verified.append(transaction) }
        }
        #expect(deferredReport == verifiedReport)
        #expect(deferred.map(\.transactionID) == [1, 2, 3])
        #expect(verified.map(\.transactionID) == [1, 2, 3])
        // Transactions 1 and 3 are whole frames: left compressed by the deferring scan, decompressed by the other.
        for index in [0, 2] {
            guard case .compressed = deferred[index].body else {
                Issue.record("transaction \(index + 1) was decompressed by the scan")
                continue
            }
            #expect(deferred[index].wholePayload == nil)
            #expect(verified[index].wholePayload != nil)
        }
        // What each record holds in memory (what egctl's window of waiting transactions counts): a whole frame's
        // stored body left compressed (smaller than its payload here), its payload once decompressed, nothing for
        // fragments.
        for index in [0, 2] {
            #expect(deferred[index].heldByteCount > 0)
            #expect(deferred[index].heldByteCount < deferred[index].payloadByteCount)
            #expect(verified[index].heldByteCount == verified[index].payloadByteCount)
        }
        #expect(deferred[1].heldByteCount == 0 && verified[1].heldByteCount == 0)
        for (left, checked) in zip(deferred, verified) {
            #expect(try left.changeset() == checked.changeset())
            #expect(try left.payload == checked.payload)
            #expect(try left.decompressed().wholePayload == checked.wholePayload)
        }
    }

    @Test(
        "a deferring scan delivers a frame whose LZ4 block is bad; decoding it throws, the verifying scan classifies it"
    )
    func badBlockFailsItsDecoding() throws {
        let scratch = Scratch()
        let path = scratch.file("bad.eglog")
        try Self.cases[1].build().write(to: path)
        let reader = try LogReader(path: path)
        var deferred: [TransactionRecord] = []
        _ = try reader.scan(defersTransactionDecompression: true) { record in
            if case .transaction(let transaction) = record { deferred.append(transaction) }
        }
        #expect(deferred.map(\.transactionID) == [1, 2, 3])
        #expect(throws: LogFormatError.self) { try deferred[1].decompressed() }
        let report = try reader.scan()
        guard case .damaged(let damage) = report.tail else {
            Issue.record("the verifying scan reports \(report.tail)")
            return
        }
        #expect(damage.byteOffset == deferred[1].byteOffset)
        #expect(damage.reason == "LZ4 block does not decompress to its recorded length")
        // The file ending inside a transaction whose fragments were left compressed: the deferring scan throws
        // where a verifying one classifies the failure (at the bad fragment, not at the transaction's end).
        let fragmentPath = scratch.file("bad-fragment.eglog")
        try Self.cases[5].build().write(to: fragmentPath)
        #expect(throws: LogFormatError.self) {
            try LogReader(path: fragmentPath).scan(defersTransactionDecompression: true)
        }
    }
}
