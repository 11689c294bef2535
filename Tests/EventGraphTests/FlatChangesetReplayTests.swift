import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// Replay decodes a transaction's payload flat (`ReplayChangeset`, LogFormat's `ChangesetVisitor`) and writes the
/// values from the payload's bytes into the columns. The state, the anomalies and the digest must be those of the
/// path before it: the `Changeset` decoded whole, staged and installed.
@Suite("Changesets decoded flat into the columns build the state the decoded Changesets build")
struct FlatChangesetReplayTests {
    /// The records with each transaction encoded and decoded again by the flat decoder (what a log's reader gives).
    static func decodedFromPayloads(_ records: [ReplayRecord]) throws -> [ReplayRecord] {
        try records.map { record throws -> ReplayRecord in
            guard case .transaction(let changeset, let handles) = record else { return record }
            let whole = changeset.changeset
            let transaction = TransactionRecord(
                transactionID: whole.transactionID, payload: try whole.encoded(), blobs: [], byteOffset: 4096)
            let decoded = try ReplayChangeset(transaction)
            #expect(decoded.changeset == whole)
            #expect(try transaction.changeset() == whole)
            return .transaction(decoded, blobHandles: handles)
        }
    }

    @Test(
        "tolerant, with operations that do not fit, schema frames and checkpoints mid-log: same state and anomalies",
        arguments: [21, 22, 23] as [UInt64])
    func tolerant(seed: UInt64) throws {
        let records = InPlaceReplayTests.records(seed: seed, faulty: true, transactions: 400)
        let decoded = try Self.decodedFromPayloads(records)
        for buildsIndexes in [false, true] {
            var flat = Replayer(
                model: nil, untilTransaction: nil, policy: .tolerant, buildsIndexes: buildsIndexes, source: "random")
            var staged = Replayer(
                model: nil, untilTransaction: nil, policy: .tolerant, buildsIndexes: buildsIndexes, source: "random",
                appliesInPlace: false)
            for (mine, theirs) in zip(decoded, records) {
                try flat.consume(mine)
                try staged.consume(theirs)
            }
            let (a, b) = (try #require(flat.state), try #require(staged.state))
            #expect(flat.anomalies == staged.anomalies)
            #expect(flat.anomalies.count > 10, "the workload has operations that do not fit")
            #expect(InPlaceReplayTests.snapshot(of: a) == InPlaceReplayTests.snapshot(of: b))
            #expect(a.digest(model: flat.model!) == b.digest(model: staged.model!))
        }
    }

    @Test("strict, with indexes: same state and digest", arguments: [31, 32] as [UInt64])
    func strict(seed: UInt64) throws {
        let model = InPlaceReplayTests.model
        let records = InPlaceReplayTests.records(seed: seed, faulty: false, transactions: 400)
        let decoded = try Self.decodedFromPayloads(records)
        var flat = Replayer(model: model, untilTransaction: nil, policy: .strict, source: "random")
        var staged = Replayer(
            model: model, untilTransaction: nil, policy: .strict, source: "random", appliesInPlace: false)
        for (mine, theirs) in zip(decoded, records) {
            try flat.consume(mine)
            try staged.consume(theirs)
        }
        let (a, b) = (try #require(flat.state), try #require(staged.state))
        #expect(a.objectCount > 100)
        #expect(InPlaceReplayTests.snapshot(of: a) == InPlaceReplayTests.snapshot(of: b))
        #expect(a.digest(model: model) == b.digest(model: model))
    }

    @Test("a strict refusal of a decoded insert names the transaction, the object and the property, as before")
    func strictRefusal() throws {
        let model = InPlaceReplayTests.model
        let name = model.entities[0].name
        let insert = Changeset(
            transactionID: 1, commitTimeMicroseconds: 0, author: "", nextKey: 10,
            operations: [
                .insert(
                    ObjectReference(entityIndex: 0, key: 9),
                    [PropertyChange(propertyIndex: 60, value: .attribute(.int64(3)))])
            ])
        let transaction = TransactionRecord(
            transactionID: 1, payload: try insert.encoded(), blobs: [], byteOffset: 0)
        for appliesInPlace in [true, false] {
            var replayer = Replayer(
                model: model, untilTransaction: nil, policy: .strict, source: "crafted.eglog",
                appliesInPlace: appliesInPlace)
            try replayer.consume(.schema(model.schema))
            #expect {
                try replayer.consume(.transaction(try ReplayChangeset(transaction), blobHandles: []))
            } throws: { error in
                "\(error)" == "crafted.eglog: transaction 1 sets property #60 of \(name) 9, which its entity lacks"
            }
        }
    }

    /// Every truncation and a byte changed at every offset of an encoded changeset: the flat decoder and
    /// `TransactionRecord.changeset()` refuse with the same error (one decoder), or both decode the same changeset.
    @Test("damaged payloads: the flat decoder refuses exactly as the Changeset decoder does")
    func damagedPayloads() throws {
        var workload = InPlaceReplayTests.Workload(seed: 5, faulty: false)
        for _ in 0..<6 {
            let changeset = workload.next()
            let bytes = try changeset.encoded()
            var variants: [[UInt8]] = (0..<bytes.count).map { Array(bytes[..<$0]) }
            for offset in bytes.indices {
                var changed = bytes
                changed[offset] ^= 0x5A
                variants.append(changed)
            }
            for payload in variants {
                let record = TransactionRecord(
                    transactionID: changeset.transactionID, payload: payload, blobs: [], byteOffset: 100)
                let whole = Result { () throws(LogFormatError) in try record.changeset() }
                let flat = Result { () throws(LogFormatError) in try ReplayChangeset(record).changeset }
                #expect(whole == flat)
            }
        }
    }

    /// A payload held whole in memory lends its strings and binaries; the flat changeset refers to them where they
    /// are (it shares the payload's array) instead of copying every byte value into a buffer of its own.
    @Test("a whole payload's byte values are referred to in the payload, not copied")
    func byteValuesStayInThePayload() throws {
        var workload = InPlaceReplayTests.Workload(seed: 9, faulty: false)
        var checked = 0
        for _ in 0..<40 {
            let changeset = workload.next()
            let payload = try changeset.encoded()
            let record = TransactionRecord(
                transactionID: changeset.transactionID, payload: payload, blobs: [], byteOffset: 100)
            let flat = try ReplayChangeset(record)
            #expect(flat.changeset == changeset)
            guard flat.values.contains(where: { $0.tag.isBytes }) else { continue }
            checked += 1
            let payloadStart = payload.withUnsafeBytes { $0.baseAddress }
            #expect(flat.bytes.withUnsafeBytes { $0.baseAddress } == payloadStart)
            #expect(flat.bytes.count == payload.count)
        }
        #expect(checked > 10)
    }

    /// A log of 60 changesets of the in-place workload, in fragments of 48 bytes; its path and the changesets.
    private static func fragmentedLog(in directory: TemporaryDirectory, seed: UInt64) throws -> (String, [Changeset]) {
        let path = directory.file("fragments-\(seed).eglog")
        var options = LogWriter.Options(durability: .none)
        options.fragmentByteCount = 48
        let writer = try LogWriter(path: path, options: options)
        var workload = InPlaceReplayTests.Workload(seed: seed, faulty: false)
        var written: [Changeset] = []
        for _ in 0..<60 {
            let changeset = workload.next()
            written.append(changeset)
            try writer.appendTransaction(id: changeset.transactionID, payload: try changeset.encoded())
        }
        try writer.close()
        return (path, written)
    }

    /// A fragmented payload too long to be read into one array has its byte values copied into a buffer of the
    /// changeset's own, which a replayed changeset hands to the next one: a reused buffer must hold only the new
    /// transaction's values.
    @Test("fragmented payloads decoded one after another into a reused buffer decode as written")
    func fragmentedPayloadsReuseABuffer() throws {
        let directory = TemporaryDirectory()
        let (path, written) = try Self.fragmentedLog(in: directory, seed: 12)
        var decoded: [Changeset] = []
        var fragmented = 0
        try LogReader(path: path).scan { record in
            guard case .transaction(let transaction) = record else { return }
            if transaction.wholePayload == nil { fragmented += 1 }
            let flat = try ReplayChangeset(transaction, assemblingUpTo: 0)
            decoded.append(flat.changeset)
            flat.recycleBuffer()
        }
        #expect(fragmented > 30)
        #expect(decoded == written)
    }

    @Test("a fragmented payload is read into one array and its values stay in it, not copied out of each fragment")
    func fragmentedPayloadsAssembled() throws {
        let directory = TemporaryDirectory()
        let (path, written) = try Self.fragmentedLog(in: directory, seed: 13)
        for deferring in [false, true] {
            var decoded: [Changeset] = []
            var fragmented = 0
            try LogReader(path: path).scan(defersTransactionDecompression: deferring) { record in
                guard case .transaction(let transaction) = record else { return }
                let flat = try ReplayChangeset(transaction)
                decoded.append(flat.changeset)
                guard transaction.wholePayload == nil, transaction.payloadByteCount > 0 else { return }
                fragmented += 1
                // The byte values refer to the payload itself (before: copies of them alone, in a buffer of their own).
                #expect(flat.bytes.count == transaction.payloadByteCount)
                #expect(flat.bytes == (try transaction.payload))
            }
            #expect(fragmented > 30)
            #expect(decoded == written)
        }
    }

    @Test("a name's precomputed words hash as the name does")
    func nameWords() {
        for name in ["", "a", "title", "exactly8", "nine char", "Ünïcødé title ✓", String(repeating: "x", count: 23)] {
            var direct = DigestHasher()
            direct.combine(string: name)
            var fromWords = DigestHasher()
            DigestHasher.words(of: name).withUnsafeBufferPointer { fromWords.combine(words: $0) }
            #expect(direct.state == fromWords.state, "\(name)")
        }
    }
}
