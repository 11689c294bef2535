import Testing

@testable import LogFormat

/// Checksums are seeded by the file's own UUID, which is in its header, so anyone can forge a frame or a header
/// copy that verifies. These tests forge fields with values no writer produces and expect a clear answer: an
/// unusable header copy, a rejected frame, or a "log is full" error — never a trap.
@Suite("Header fields out of range")
struct HeaderFieldBoundsTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("store.eglog") }

    /// A field, the bytes forged into it, and the words the error must contain.
    struct Forgery: CustomStringConvertible, Sendable {
        var name: String
        var fieldOffset: Int
        var bytes: [UInt8]
        var description: String { name }
    }

    static let forgeries: [Forgery] = [
        Forgery(name: "headerByteCount", fieldOffset: 12, bytes: LogFileSurgery.littleEndian(UInt32.max)),
        Forgery(name: "baseSequence", fieldOffset: 72, bytes: LogFileSurgery.littleEndian(UInt64(0))),
        Forgery(name: "baseSequence", fieldOffset: 72, bytes: LogFileSurgery.littleEndian(UInt64.max)),
        Forgery(name: "generation", fieldOffset: 64, bytes: LogFileSurgery.littleEndian(UInt64.max)),
        Forgery(name: "major version", fieldOffset: 8, bytes: LogFileSurgery.littleEndian(UInt16(0))),
        Forgery(name: "maxTransactionByteCount", fieldOffset: 88, bytes: LogFileSurgery.littleEndian(UInt32.max)),
        Forgery(name: "reserved byte", fieldOffset: 100, bytes: [7]),
    ]

    @Test("a forged out-of-range field in both copies: damaged, naming the field and its offset", arguments: forgeries)
    func bothCopies(forgery: Forgery) throws {
        try TestLog.make(at: path, transactionCount: 2)
        try LogFileSurgery.forgeHeaderField(path, at: forgery.fieldOffset, forgery.bytes)
        let before = try LogFileSurgery.bytes(of: path)

        let readError = #expect(throws: LogFormatError.self) { _ = try LogReader(path: path) }
        #expect(readError?.code == .damaged)
        #expect(readError?.byteOffset == UInt64(forgery.fieldOffset))
        #expect(readError?.message.contains(forgery.name) == true, "\(readError?.message ?? "")")
        let writeError = #expect(throws: LogFormatError.self) { _ = try LogWriter(path: path) }
        #expect(writeError?.code == .damaged)
        #expect(try LogFileSurgery.bytes(of: path) == before)
    }

    @Test(
        "a forged out-of-range field in one copy: the other copy is used, and the damage reported",
        arguments: forgeries, [0, 1])
    func oneCopy(forgery: Forgery, copy: Int) throws {
        try TestLog.make(at: path, transactionCount: 2)
        try LogFileSurgery.forgeHeaderField(path, at: forgery.fieldOffset, forgery.bytes, copies: [copy])

        let replay = try Replay.read(path)
        #expect(replay.report.headerCopyDamaged)
        #expect(replay.transactions == TestLog.expected(1...2))
    }

    @Test("a file of format 1.0 (no recorded transaction limit) is bound by the format's limit")
    func unrecordedLimit() throws {
        try TestLog.make(at: path, transactionCount: 1)
        try LogFileSurgery.forgeHeaderField(path, at: 88, LogFileSurgery.littleEndian(UInt32(0)))
        let reader = try LogReader(path: path)
        #expect(reader.header.maxTransactionByteCount == 0)
        #expect(reader.header.transactionByteLimit == LogLimits.maxTransactionByteCount)
    }
}

@Suite("Sequence numbers and watermarks at the edges")
struct SequenceBoundsTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("store.eglog") }

    @Test("frames numbered up to 2⁶⁴−1: the last is rejected, not incremented; appending says the log is full")
    func largestSequence() throws {
        try TestLog.make(at: path, transactionCount: 2)  // two transactions and a seal
        try LogFileSurgery.editHeader(path) { $0.baseSequence = UInt64.max - 2 }
        for (index, frame) in try FrameMap.frames(in: path).enumerated() {
            var header = frame.header
            header.sequence = UInt64.max - 2 + UInt64(index)
            try FrameMap.rewriteHeader(path, at: frame.byteOffset, header)
        }

        let replay = try Replay.read(path)
        #expect(replay.transactions == TestLog.expected(1...2))
        #expect(replay.report.tail.isTorn, "the seal numbered 2⁶⁴−1 is not a frame; nothing proves it synced")

        let writer = try LogWriter(path: path)
        let error = #expect(throws: LogFormatError.self) {
            try writer.appendTransaction(id: 3, payload: TestLog.payload(for: 3))
        }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message.contains("sequence number") == true)
    }

    @Test("a frame whose durable watermark is past its own offset fails its checks")
    func watermarkPastItself() throws {
        let appended = try TestLog.make(at: path, transactionCount: 3)
        let frames = try FrameMap.frames(in: path)
        var header = frames[1].header
        header.durableWatermark = UInt64.max
        try FrameMap.rewriteHeader(path, at: frames[1].byteOffset, header)

        let replay = try Replay.read(path)
        #expect(replay.transactions == TestLog.expected(1...1))
        let damage = try #require(replay.report.tail.damage)
        #expect(damage.byteOffset == appended[1].byteOffset)
        #expect(damage.reason.contains("watermark"))
    }

    @Test("reports about the largest transaction ID do not overflow")
    func largestTransactionIDInReports() {
        let damage = DamageReport(
            byteOffset: 1024, reason: "test", lastGoodTransactionID: UInt64.max, nextGoodTransactionID: nil,
            nextGoodByteOffset: nil)
        #expect(damage.affectedTransactionIDs == nil)
        #expect(damage.summary.contains("after \(UInt64.max)"))
        let wrapped = DamageReport(
            byteOffset: 1024, reason: "test", lastGoodTransactionID: UInt64.max, nextGoodTransactionID: 5,
            nextGoodByteOffset: 2048)
        #expect(wrapped.affectedTransactionIDs == nil)
        let region = SalvageReport.LostRegion(
            byteOffset: 1024, byteCount: 8, reason: "test", afterTransactionID: UInt64.max, nextTransactionID: 3)
        #expect(region.transactionIDs == nil)
    }
}

@Suite("The transaction limit a file records")
struct TransactionLimitTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("store.eglog") }

    @Test("a writer records its limit, refuses larger transactions, and keeps the limit across reopen and rewrite")
    func recordedLimit() throws {
        var options = LogWriter.Options()
        options.maxTransactionByteCount = 4096
        let writer = try LogWriter(path: path, options: options)
        try writer.appendTransaction(id: 1, payload: TestLog.payload(for: 1, byteCount: 4096))
        let error = #expect(throws: LogFormatError.self) {
            try writer.appendTransaction(id: 2, payload: TestLog.payload(for: 2, byteCount: 4097))
        }
        #expect(error?.code == .limitExceeded)
        try writer.close()
        #expect(try LogReader(path: path).header.maxTransactionByteCount == 4096)

        let reopened = try LogWriter(path: path)  // default options: the file's limit applies
        #expect(throws: LogFormatError.self) {
            try reopened.appendTransaction(id: 2, payload: TestLog.payload(for: 2, byteCount: 4097))
        }
        try reopened.close()
    }

    @Test("fragments that add up to more than the recorded limit are rejected at the fragment that passes it")
    func fragmentsOverTheLimit() throws {
        var options = LogWriter.Options()
        options.fragmentByteCount = 1000
        let writer = try LogWriter(path: path, options: options)
        try writer.appendTransaction(id: 1, payload: TestLog.payload(for: 1, byteCount: 3500))
        try writer.appendTransaction(id: 2, payload: TestLog.payload(for: 2))
        try writer.close()
        let fragments = try FrameMap.frames(in: path).filter { $0.header.transactionID == 1 }
        #expect(fragments.count == 4)
        try LogFileSurgery.forgeHeaderField(path, at: 88, LogFileSurgery.littleEndian(UInt32(2500)))

        let replay = try Replay.read(path)
        #expect(replay.transactions.isEmpty)
        let damage = try #require(replay.report.tail.damage, "the later frames prove the fragments were synced")
        #expect(damage.byteOffset == fragments[2].byteOffset)
        #expect(damage.reason.contains("limit of 2500"))
    }

    @Test("a writer refuses a limit outside 1 byte … 1 GiB", arguments: [0, LogLimits.maxTransactionByteCount + 1])
    func limitOutOfRange(limit: Int) {
        var options = LogWriter.Options()
        options.maxTransactionByteCount = limit
        let error = #expect(throws: LogFormatError.self) { _ = try LogWriter(path: path, options: options) }
        #expect(error?.code == .invalidArgument)
    }
}
