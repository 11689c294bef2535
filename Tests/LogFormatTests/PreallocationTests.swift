import Foundation
import Testing

@testable import LogFormat

/// The zeros a writer keeps ahead of the log's end (h54): written with the batch that would grow the file, cut off on
/// close, and after a crash read as nothing — never as damage, never reported as a torn tail — by every reader.
@Suite("Preallocated space")
struct PreallocationTests {
    /// A writer's options with preallocation on at 1 MiB (the default since h58; explicit, so that these tests keep
    /// testing it should the default change).
    private static var preallocating: LogWriter.Options {
        var options = LogWriter.Options()
        options.preallocationByteCount = 1 << 20
        return options
    }

    /// A log of `count` transactions left as a crash leaves it: not closed, zeros after its last frame.
    private func crashedLog(at path: String, count: Int = 40) throws -> (dataEnd: UInt64, size: UInt64) {
        let appended = try TestLog.make(
            at: path, transactionCount: count, close: false, preallocationByteCount: 1 << 20)
        return (appended.last!.endByteOffset, try LogFileSurgery.size(of: path))
    }

    @Test("how far ahead: an eighth of the log, 64 KiB to the maximum, 4 KiB-aligned; nothing while a batch fits")
    func extensionPolicy() {
        #expect(LogWriter.extension(batchEnd: 1000, allocatedEnd: 1000, maximum: 1 << 20) == nil)
        #expect(LogWriter.extension(batchEnd: 1000, allocatedEnd: 70_000, maximum: 1 << 20) == nil)
        // 1000 + 64 KiB, rounded up to 4 KiB.
        #expect(LogWriter.extension(batchEnd: 1000, allocatedEnd: 999, maximum: 1 << 20) == 69_632)
        #expect(LogWriter.extension(batchEnd: 4 << 20, allocatedEnd: 0, maximum: 1 << 20) == (4 << 20) + (512 << 10))
        #expect(LogWriter.extension(batchEnd: 64 << 20, allocatedEnd: 0, maximum: 1 << 20) == (65 << 20))
        #expect(LogWriter.extension(batchEnd: 1000, allocatedEnd: 0, maximum: 0) == nil)
        // Hostile ends near the top of the range do not overflow: no zeros then.
        #expect(LogWriter.extension(batchEnd: UInt64.max - 10, allocatedEnd: 0, maximum: 1 << 20) == nil)
        #expect(LogWriter.extension(batchEnd: UInt64.max - (1 << 16) - 100, allocatedEnd: 0, maximum: 1 << 20) == nil)
    }

    @Test("an open writer keeps synced zeros after its last frame; closing cuts them off after the seal")
    func zerosAheadThenCutOnClose() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("log.eglog")
        let writer = try LogWriter(path: path, options: Self.preallocating)
        var end: UInt64 = 0
        for id in 1...UInt64(50) {
            end = try writer.appendTransaction(id: id, payload: TestLog.payload(for: id)).endByteOffset
        }
        let size = try LogFileSurgery.size(of: path)
        #expect(size > end && size >= LogWriter.minimumPreallocation, "an append that grew the file wrote zeros ahead")
        #expect(size % 4096 == 0)
        let bytes = try LogFileSurgery.bytes(of: path)
        #expect(bytes[Int(end)...].allSatisfy { $0 == 0 })
        try writer.close()
        let closed = try LogFileSurgery.size(of: path)
        #expect(closed == writer.byteCount && closed > end, "the file ends with the seal")
        let replay = try Replay.read(path)
        #expect(replay.report.tail == .clean && replay.report.endsWithSeal)
        #expect(replay.transactions == TestLog.expected(1...50))
    }

    @Test("the file grows only when a batch reaches past the zeros: far fewer size changes than appends")
    func fewSizeChanges() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("log.eglog")
        let writer = try LogWriter(path: path, options: Self.preallocating)
        var sizes: Set<UInt64> = []
        for id in 1...UInt64(1000) {
            try writer.appendTransaction(id: id, payload: TestLog.payload(for: id, byteCount: 500))
            sizes.insert(try LogFileSurgery.size(of: path))
        }
        #expect(sizes.count <= 10, "\(sizes.count) distinct file sizes in 1,000 appends")
        try writer.close()
    }

    @Test("zeros ahead by default (h58); none without syncs (durability none) or with the option at 0")
    func notWithoutSyncs() throws {
        let directory = TemporaryDirectory()
        let defaultPath = directory.file("default.eglog")
        let writer = try LogWriter(path: defaultPath)
        let first = try writer.appendTransaction(id: 1, payload: TestLog.payload(for: 1))
        #expect(try LogFileSurgery.size(of: defaultPath) >= first.endByteOffset + LogWriter.minimumPreallocation)
        try writer.close()
        for (name, options) in [
            ("none", LogWriter.Options(durability: .none)),
            (
                "off",
                {
                    var options = LogWriter.Options(); options.preallocationByteCount = 0; return options
                }()
            ),
        ] {
            let path = directory.file("\(name).eglog")
            let writer = try LogWriter(path: path, options: options)
            let appended = try writer.appendTransaction(id: 1, payload: TestLog.payload(for: 1))
            #expect(try LogFileSurgery.size(of: path) == appended.endByteOffset, "\(name)")
            try writer.close()
        }
    }

    @Test("after a crash the zeros read as nothing: every transaction read-only, and a writer cuts them off unreported")
    func crashLeavesZeros() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("log.eglog")
        let (dataEnd, size) = try crashedLog(at: path)
        #expect(size > dataEnd)
        // Read-only (and any reader of format 1 before h54): the zeros are a torn tail, never damage.
        let replay = try Replay.read(path)
        #expect(replay.transactions == TestLog.expected(1...40))
        #expect(replay.report.tail.isTorn && replay.report.tail.byteOffset == dataEnd)
        // Named as what it is (h58), for the read-only view and egctl: zeros, not a torn write.
        if case .torn(let tail) = replay.report.tail { #expect(tail.isPreallocatedSpace) }
        // A writer cuts them off and says so as preallocated space, not as a torn tail.
        let writer = try LogWriter(path: path)
        #expect(writer.recoveryReport.truncatedTail == nil)
        #expect(writer.recoveryReport.trimmedPreallocationByteCount == size - dataEnd)
        #expect(writer.lastTransactionID == 40)
        #expect(try LogFileSurgery.size(of: path) == dataEnd)
        try writer.appendTransaction(id: 41, payload: TestLog.payload(for: 41))
        try writer.close()
        #expect(try Replay.read(path).transactions == TestLog.expected(1...41))
    }

    @Test("cut at every offset inside the zeros, and at every offset of the last frame with zeros after it")
    func cutEverywhere() throws {
        let directory = TemporaryDirectory(inMemory: true)
        let original = directory.file("original.eglog")
        let appended = try TestLog.make(
            at: original, transactionCount: 12, close: false, preallocationByteCount: 1 << 20)
        let bytes = try LogFileSurgery.bytes(of: original)
        let dataEnd = Int(appended.last!.endByteOffset)
        let lastStart = Int(appended.last!.byteOffset)
        #expect(bytes.count > dataEnd)
        let path = directory.file("cut.eglog")
        // Cuts inside the zeros (and at their end): all 12 transactions, nothing reported as torn. Every offset
        // within a frame header's reach of either end of the zeros, and a prime stride between them: a scan of a cut
        // walks the zeros after it, so every offset of 64 KiB of them is quadratic (over 10 minutes in debug).
        let reach = 128
        let cuts = Set(
            Array(dataEnd...min(bytes.count, dataEnd + reach))
                + Array(max(dataEnd, bytes.count - reach)...bytes.count)
                + Array(stride(from: dataEnd, through: bytes.count, by: 2039)))
        for cut in cuts.sorted() {
            try LogFileSurgery.write(Array(bytes[..<cut]), to: path)
            let replay = try Replay.read(path)
            let writer = try LogWriter(path: path, options: .init(durability: .none))
            let size = try LogFileSurgery.size(of: path)
            let ok =
                replay.transactions.count == 12 && replay.report.tail.damage == nil
                && writer.recoveryReport.truncatedTail == nil
                && writer.recoveryReport.trimmedPreallocationByteCount == UInt64(cut - dataEnd)
                && writer.lastTransactionID == 12 && size == UInt64(dataEnd)
            try writer.close()
            guard ok else {
                Issue.record(
                    "cut at \(cut) in the zeros: \(replay.transactions.count) transactions, \(replay.report.tail)")
                return
            }
        }
        // The last frame cut anywhere, zeros after it (its batch never fully reached the disk): a torn tail at the
        // frame, reported, with the 11 transactions before it — except when none of its bytes arrived: then the
        // tail is all zeros, cut off as preallocated space (Docs/FileFormat.md §4: such a batch was never
        // acknowledged, as with any torn tail).
        // (A cut whose bytes to the frame's end are zeros already changes nothing: the intact file, tested above.)
        for cut in lastStart..<dataEnd where bytes[cut..<dataEnd].contains(where: { $0 != 0 }) {
            var torn = bytes
            for index in cut..<dataEnd { torn[index] = 0 }
            try LogFileSurgery.write(torn, to: path)
            let replay = try Replay.read(path)
            let writer = try LogWriter(path: path, options: .init(durability: .none))
            let reported = writer.recoveryReport.truncatedTail
            let tailByteCount = UInt64(bytes.count - lastStart)
            let reportedRight =
                cut == lastStart
                ? reported == nil && writer.recoveryReport.trimmedPreallocationByteCount == tailByteCount
                : reported?.byteOffset == UInt64(lastStart) && reported?.byteCount == tailByteCount
            let ok =
                replay.transactions.count == 11 && replay.report.tail.isTorn && reportedRight
                && writer.lastTransactionID == 11
            try writer.close()
            guard ok else {
                let message =
                    "last frame zeroed from \(cut) (frame \(lastStart)..<\(dataEnd), file \(bytes.count)): "
                    + "\(replay.transactions.count) transactions, \(replay.report.tail), "
                    + "\(String(describing: reported)), trimmed \(writer.recoveryReport.trimmedPreallocationByteCount)"
                Issue.record(Comment(rawValue: message))
                return
            }
        }
    }

    @Test(
        "a bit flipped in the zeros is a torn tail (reported, cut off), never damage; damage before them is still found"
    )
    func bitFlips() throws {
        let directory = TemporaryDirectory(inMemory: true)
        let original = directory.file("original.eglog")
        let appended = try TestLog.make(
            at: original, transactionCount: 12, close: false, preallocationByteCount: 1 << 20)
        let bytes = try LogFileSurgery.bytes(of: original)
        let dataEnd = UInt64(appended.last!.endByteOffset)
        let path = directory.file("flipped.eglog")
        for offset in stride(from: dataEnd, to: UInt64(bytes.count), by: 997) {
            try LogFileSurgery.write(bytes, to: path)
            try LogFileSurgery.flipBit(path, byteOffset: offset, bit: Int(offset % 8))
            let replay = try Replay.read(path)
            #expect(replay.transactions.count == 12)
            if case .torn(let tail) = replay.report.tail { #expect(!tail.isPreallocatedSpace, "a set bit is no zero") }
            try TestLog.expectWriterTruncates(path, tornAt: dataEnd)
        }
        // A flip in a synced frame (transaction 3's) is proven by the later frames' watermarks: damage, as without
        // zeros, and nothing is cut.
        try LogFileSurgery.write(bytes, to: path)
        let damaged = appended[2].byteOffset + 40
        try LogFileSurgery.flipBit(path, byteOffset: damaged)
        try TestLog.expectWriterRefuses(path, damageAt: appended[2].byteOffset)
    }
}
