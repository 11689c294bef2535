import TestSupport
import Testing

@testable import LogFormat

/// A transaction that spans fragments is decoded from the file fragment by fragment (never assembled), so every
/// value of the changeset encoding must decode the same when it crosses a fragment boundary anywhere.
@Suite("Fragmented transactions decode as a stream")
struct FragmentedDecodeTests {
    let directory = TemporaryDirectory()

    @Test("random changesets split into tiny fragments decode exactly as they were written", arguments: [1, 3, 7, 64])
    func tinyFragments(fragmentByteCount: Int) throws {
        let seed = randomPayloadSeed &+ UInt64(fragmentByteCount)
        var random = RandomPayloads(generator: SeededGenerator(seed: seed))
        let path = directory.file("fragments-\(fragmentByteCount).eglog")
        var options = LogWriter.Options(durability: .none)
        options.fragmentByteCount = fragmentByteCount
        let writer = try LogWriter(path: path, options: options)
        var written: [[UInt8]] = []
        for id in 1...40 {
            var changeset = random.changeset()
            changeset.transactionID = UInt64(id)
            let bytes = try changeset.encoded()
            written.append(bytes)
            try writer.appendTransaction(id: UInt64(id), payload: bytes)
        }
        try writer.close()

        var decoded: [[UInt8]] = []
        let report = try LogReader(path: path).scan { record in
            guard case .transaction(let transaction) = record else { return }
            #expect(transaction.payloadByteCount == written[decoded.count].count)
            decoded.append(try transaction.changeset().encoded())
        }
        #expect(report.tail == .clean)
        #expect(decoded == written, "seed \(seed) (EG_TEST_SEED replays it)")
    }

    @Test("a fragmented payload that is not a changeset fails at its first byte, naming the transaction")
    func garbageFailsEarly() throws {
        let path = directory.file("garbage.eglog")
        var options = LogWriter.Options()
        options.fragmentByteCount = 1024
        let writer = try LogWriter(path: path, options: options)
        try writer.appendTransaction(id: 1, payload: [UInt8](repeating: 0, count: 10_000))
        try writer.close()
        var failure: LogFormatError?
        try LogReader(path: path).scan { record in
            guard case .transaction(let transaction) = record else { return }
            do { _ = try transaction.changeset() } catch let error as LogFormatError { failure = error }
        }
        #expect(failure?.code == .malformedPayload)
        #expect(failure?.message.contains("transaction 1") == true)
        #expect(failure?.message.contains("format version 0") == true)
    }
}
