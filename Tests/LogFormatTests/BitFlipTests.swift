import Foundation
import TestSupport
import Testing

@testable import LogFormat

/// Seeded random single-bit flips over a closed log: every one is noticed, none is silently accepted.
///
/// What each flip must produce, by where it lands:
/// - in the 1 KiB header region (either copy or the zero gaps): the file still opens from the other copy, with
///   `headerCopyDamaged` set, and every transaction intact;
/// - in any frame before the seal (header, body or padding): damage reported at exactly that frame's offset,
///   with the transactions before it delivered (the seal's watermark proves every such frame was synced);
/// - in the seal itself: a torn tail at the seal's offset (nothing after it proves it synced, and it holds no data).
@Suite("Random bit flips")
struct BitFlipTests {
    static let trialCount = 10_000

    @Test("10,000 seeded single-bit flips are all detected and classified")
    func singleBitFlips() throws {
        let seed = TestSeed.make()
        var generator = SeededGenerator(seed: seed)
        let directory = TemporaryDirectory(inMemory: true)
        let path = directory.file("flip.eglog")
        let (appended, transactions) = try makeLog(at: path, using: &generator)
        let original = try LogFileSurgery.bytes(of: path)
        let frames = try FrameMap.frames(in: path)
        let seal = try #require(frames.last)
        #expect(seal.header.type == .seal && seal.endByteOffset == UInt64(original.count))

        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var failures = 0
        var outcomes: [String: Int] = [:]
        for trial in 0..<Self.trialCount {
            let byteOffset = Int.random(in: 0..<original.count, using: &generator)
            let bit = Int.random(in: 0..<8, using: &generator)
            try handle.seek(toOffset: UInt64(byteOffset))
            try handle.write(contentsOf: Data([original[byteOffset] ^ (1 << bit)]))
            defer {
                try? handle.seek(toOffset: UInt64(byteOffset))
                try? handle.write(contentsOf: Data([original[byteOffset]]))
            }

            let problem: String?
            let outcome: String
            if byteOffset < Int(LogFileHeader.framesByteOffset) {
                outcome = "header region"
                problem = try checkHeaderFlip(path, transactions: transactions)
            } else {
                let frame = try #require(frames.last { $0.byteOffset <= UInt64(byteOffset) })
                let survivors = appended.prefix { $0.endByteOffset <= frame.byteOffset }.count
                outcome = frame == seal ? "seal" : "\(frame.header.type) frame"
                problem = try checkFrameFlip(
                    path, frame: frame, isSeal: frame == seal, survivors: Array(transactions.prefix(survivors)))
                if problem == nil, trial % 200 == 0 {
                    try checkWriter(path, frame: frame, isSeal: frame == seal, original: original)
                }
            }
            outcomes[outcome, default: 0] += 1
            if let problem {
                failures += 1
                Issue.record("trial \(trial), bit \(bit) of byte \(byteOffset) (seed \(seed)): \(problem)")
                if failures >= 10 { return }
            }
        }
        print("bit flips by region: \(outcomes.sorted { $0.key < $1.key })")
        #expect(try LogFileSurgery.bytes(of: path) == original)
    }

    /// One copy (or a gap) damaged: still opens from the other copy, flagged, everything intact.
    private func checkHeaderFlip(_ path: String, transactions: [ReplayedTransaction]) throws -> String? {
        let replay: Replay
        do {
            replay = try Replay.read(path)
        } catch {
            return "a single flip in the header region made the file unreadable: \(error)"
        }
        guard replay.report.headerCopyDamaged else { return "the flip was not reported (headerCopyDamaged is false)" }
        guard replay.report.tail == .clean, replay.transactions == transactions else {
            return "the frames no longer read back: \(replay.report.tail)"
        }
        return nil
    }

    /// A flip inside a frame: damage at that frame (or a torn tail at the seal), the transactions before it intact.
    private func checkFrameFlip(
        _ path: String, frame: FrameLayout, isSeal: Bool, survivors: [ReplayedTransaction]
    ) throws -> String? {
        let replay = try Replay.read(path)
        if replay.report.tail == .clean && !replay.report.headerCopyDamaged {
            return "silently accepted: clean tail, \(replay.transactions.count) transactions"
        }
        switch replay.report.tail {
        case .damaged(let damage) where !isSeal:
            guard damage.byteOffset == frame.byteOffset else {
                return "damage reported at \(damage.byteOffset), the flipped frame starts at \(frame.byteOffset)"
            }
        case .torn(let tail) where isSeal:
            guard tail.byteOffset == frame.byteOffset else {
                return "torn tail at \(tail.byteOffset), seal at \(frame.byteOffset)"
            }
        default:
            return
                "expected \(isSeal ? "a torn tail" : "damage") at \(frame.byteOffset) in a \(frame.header.type) frame, "
                + "got \(replay.report.tail)"
        }
        guard replay.transactions == survivors else {
            return
                "delivered \(replay.transactions.count) transactions, expected the \(survivors.count) before the flip"
        }
        return nil
    }

    /// The writer refuses damaged synced data without touching the file, and cuts off a damaged seal.
    private func checkWriter(_ path: String, frame: FrameLayout, isSeal: Bool, original: [UInt8]) throws {
        if isSeal {
            // Truncating the seal changes the file: do it on a copy.
            let copy = path + ".copy"
            try LogFileSurgery.write(try LogFileSurgery.bytes(of: path), to: copy)
            defer { try? FileManager.default.removeItem(atPath: copy) }
            try TestLog.expectWriterTruncates(copy, tornAt: frame.byteOffset)
        } else {
            try TestLog.expectWriterRefuses(path, damageAt: frame.byteOffset)
        }
    }

    /// A sealed `.full` log of a schema and 40 transactions: plain, fragmented, with blobs, compressed.
    private func makeLog(at path: String, using generator: inout SeededGenerator) throws
        -> ([AppendedTransaction], [ReplayedTransaction])
    {
        var options = LogWriter.Options()
        options.fragmentByteCount = 300
        let writer = try LogWriter(path: path, options: options)
        try writer.append(schema: SchemaPayload(modelName: "Flip", versionIdentifier: "1", modelHash: 1, entities: []))
        var appended: [AppendedTransaction] = []
        var transactions: [ReplayedTransaction] = []
        for id in 1...40 as ClosedRange<UInt64> {
            let payload: [UInt8] =
                switch id % 5 {
                case 0: TestBytes.random(700, using: &generator)  // three fragments
                case 1: TestBytes.text(400)  // compressed
                default: TestBytes.random(Int.random(in: 0...60, using: &generator), using: &generator)
                }
            let blobs = id % 6 == 0 ? [TestBytes.random(30, using: &generator), TestBytes.text(500)] : []
            appended.append(try writer.appendTransaction(id: id, payload: payload, blobs: blobs))
            transactions.append(ReplayedTransaction(id: id, payload: payload))
        }
        try writer.close()
        return (appended, transactions)
    }
}
