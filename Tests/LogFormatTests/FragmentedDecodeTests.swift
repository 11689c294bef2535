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

    /// The fragmented payloads of a log of random changesets (fragments with raw and LZ4 bodies), as a scan
    /// delivers them (`deferring`: the scan that leaves transactions' decompression to their decoding).
    private func fragmentedPayloads(deferring: Bool) throws -> [FragmentedPayload] {
        var random = RandomPayloads(generator: SeededGenerator(seed: randomPayloadSeed &+ 91))
        let path = directory.file("assembled-\(deferring).eglog")
        var options = LogWriter.Options(durability: .none)
        options.fragmentByteCount = 200
        let writer = try LogWriter(path: path, options: options)
        for id in 1...30 {
            var changeset = random.changeset()
            changeset.transactionID = UInt64(id)
            try writer.appendTransaction(id: UInt64(id), payload: try changeset.encoded())
        }
        try writer.close()
        var payloads: [FragmentedPayload] = []
        try LogReader(path: path).scan(defersTransactionDecompression: deferring) { record in
            guard case .transaction(let transaction) = record, case .fragmented(let fragments) = transaction.body
            else { return }
            payloads.append(fragments)
        }
        return payloads
    }

    @Test(
        "a fragmented payload assembled in one array is its fragments joined; a longer one than the bound is not read",
        arguments: [false, true])
    func assembledPayloads(deferring: Bool) throws {
        let payloads = try fragmentedPayloads(deferring: deferring)
        #expect(payloads.count >= 5)
        for payload in payloads {
            #expect(
                try payload.assembled(maxByteCount: payload.byteCount) == SpannedPayload.fragmented(payload).bytes())
            #expect(try payload.assembled(maxByteCount: payload.byteCount - 1) == nil)
        }
    }

    @Test("fragments whose lengths do not add up to the scan's sum fail as a file changed underneath, none overrun")
    func assembledLengthsChecked() throws {
        let payload = try #require(try fragmentedPayloads(deferring: true).first)
        for wrongCount in [payload.byteCount - 1, payload.byteCount + 1, 1] {
            let forged = FragmentedPayload(
                kind: payload.kind, file: payload.file, seed: payload.seed, dictionary: payload.dictionary,
                transactionID: payload.transactionID, firstByteOffset: payload.firstByteOffset,
                firstSequence: payload.firstSequence, fragmentCount: payload.fragmentCount, byteCount: wrongCount)
            #expect {
                _ = try forged.assembled(maxByteCount: .max)
            } throws: { error in
                (error as? LogFormatError)?.code == .damaged
                    && (error as? LogFormatError)?.message.contains("the file changed underneath the reader") == true
            }
        }
    }
}
