import Foundation
import Testing

@testable import LogFormat

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value shared with a hook or a thread the test starts.
private final class SharedBox<Value: Sendable>: @unchecked Sendable {
    // @unchecked: every access to `value` holds `lock`.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func update<R>(_ body: (inout Value) throws -> R) rethrows -> R { try lock.withLock { try body(&value) } }
    var current: Value { lock.withLock { value } }
}

/// Scans of a log that a writer with preallocated space is appending to (h58). The file's size then counts zeros
/// ahead of the writer's end, so a scan's window holds bytes the writer is still writing; a frame written there
/// during the scan must never make an unfinished frame before it look like damage (KillNine's "the automatic
/// checkpoint failed: damage … frame header checksum mismatch" on 075f3a8), and real damage must still be found.
///
/// The race is played deterministically: a frame's bytes are zeroed in the file, as a `pread` that copied them
/// before the writer wrote them would see, while the frame after it (whose watermark proves the first was synced) is
/// in place; a read hook (``FaultInjector/onRead(_:)``) puts the frame back when the writer would have.
@Suite("Preallocated space beside a live scan")
struct PreallocationRaceTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("store.eglog") }

    private static var preallocating: LogWriter.Options {
        var options = LogWriter.Options()
        options.preallocationByteCount = 1 << 20
        return options
    }

    /// A log of 12 durable transactions as a writer leaves it while it runs (not closed: zeros after the last);
    /// returns the 11th (the frame a scan sees unfinished) and the 12th, whose watermark passes the 11th's start.
    private func liveLog() throws -> (eleventh: AppendedTransaction, twelfth: AppendedTransaction) {
        let writer = try LogWriter(path: path, options: Self.preallocating)
        var appended: [AppendedTransaction] = []
        for id in 1...UInt64(12) {
            appended.append(try writer.appendTransaction(id: id, payload: TestLog.payload(for: id)))
        }
        #expect(try LogFileSurgery.size(of: path) > appended[11].endByteOffset, "zeros ahead of the writer's end")
        #expect(appended[11].byteOffset == appended[10].endByteOffset)
        return (appended[10], appended[11])
    }

    /// Scans `path` as another process's read-only open does (the window is the file's size), with `faults` seeing
    /// its reads.
    private func scan(faults: FaultInjector) throws -> ScanResult {
        let header = try LogReader(path: path).header
        let file = try LogFile(path: path, flags: O_RDONLY, faults: faults)
        let size = try file.size()
        var scanner = LogScanner(window: FileWindow(file: file, limit: size), header: header)
        return try scanner.scan { _ in }
    }

    @Test("a frame read before the writer wrote it, beside a later frame read after, is re-read: not damage")
    func unfinishedFrameBesideALaterOneIsNotDamage() throws {
        let (eleventh, _) = try liveLog()
        let bytes = try LogFileSurgery.bytes(of: path)
        let frame = Array(bytes[Int(eleventh.byteOffset)..<Int(eleventh.endByteOffset)])
        // The first read sees the 11th transaction's bytes as zeros (not written yet) and the 12th written.
        try LogFileSurgery.overwrite(path, at: eleventh.byteOffset, with: [UInt8](repeating: 0, count: frame.count))
        let faults = FaultInjector()
        let reads = SharedBox(0)
        let path = self.path
        faults.onRead { _, _ in
            let count = reads.update { count -> Int in
                count += 1
                return count
            }
            // Every read after the first sees the frame the writer had finished by then.
            if count == 2 { try? LogFileSurgery.overwrite(path, at: eleventh.byteOffset, with: frame) }
        }
        let result = try scan(faults: faults)
        if case .damaged(let damage) = result.tail {
            Issue.record("a live writer's frame was called damage: \(damage.summary)")
        }
        #expect(result.lastTransactionID == 12)
        #expect(reads.current >= 2, "the failed frame was read again")
    }

    @Test("a frame that still fails when read again, with a later frame proving it was synced, is damage")
    func frameFailingAgainIsDamage() throws {
        let (eleventh, twelfth) = try liveLog()
        try LogFileSurgery.flipBit(path, byteOffset: eleventh.byteOffset + UInt64(FrameHeader.byteCount) + 3)
        let faults = FaultInjector()
        let reads = SharedBox(0)
        faults.onRead { _, _ in reads.update { $0 += 1 } }
        let result = try scan(faults: faults)
        guard case .damaged(let damage) = result.tail else {
            Issue.record("a bit flipped in synced data was not called damage: \(result.tail)")
            return
        }
        #expect(damage.byteOffset == eleventh.byteOffset)
        #expect(damage.nextGoodByteOffset == twelfth.byteOffset)
        #expect(result.lastTransactionID == 10)
        #expect(reads.current == 2, "read once, then the failed frame once more")
        // A writer's open refuses it too.
        #expect(throws: LogFormatError.self) { try LogWriter(path: path, options: Self.preallocating) }
    }

    @Test("the rewrite's tail copy stops at the writer's finished end: a frame written during it is not damage")
    func tailCopyStopsAtTheWrittenEnd() throws {
        let faults = FaultInjector()
        var options = Self.preallocating
        options.faultInjector = faults
        let writer = try LogWriter(path: path, options: options)
        try writer.append(schema: PayloadFixtures.schema)
        for id in 1...UInt64(3) { try writer.appendTransaction(id: id, payload: TestLog.payload(for: id)) }
        let anchor = try writer.rewriteAnchor()
        // Appended after the anchor: the first unlocked copy has this one to read.
        try writer.appendTransaction(id: 4, payload: TestLog.payload(for: 4))
        // While that copy reads the log, the writer appends two more transactions into the zeros; the copy's read
        // sees the first of them unfinished (zeros) and the second finished.
        let unfinished = SharedBox<(byteOffset: UInt64, bytes: [UInt8])?>(nil)
        let fired = SharedBox(false)
        let path = self.path
        faults.onRead { readPath, _ in
            guard readPath == path,
                !fired.update({ fired in
                    defer { fired = true }; return fired
                })
            else { return }
            do {
                let fifth = try writer.appendTransaction(id: 5, payload: TestLog.payload(for: 5))
                try writer.appendTransaction(id: 6, payload: TestLog.payload(for: 6))
                let bytes = try LogFileSurgery.bytes(of: path)
                let frame = Array(bytes[Int(fifth.byteOffset)..<Int(fifth.endByteOffset)])
                unfinished.update { $0 = (fifth.byteOffset, frame) }
                try LogFileSurgery.overwrite(
                    path, at: fifth.byteOffset, with: [UInt8](repeating: 0, count: frame.count))
            } catch {
                Issue.record("the appends beside the copy failed: \(error)")
            }
        }
        let begin = CheckpointBegin(
            lastTransactionID: anchor.lastTransactionID, lastCommitTimeMicroseconds: 1_700_000_000, nextKey: 99,
            objectCount: 3)
        let prepared = try writer.prepareRewrite(
            from: anchor, schema: PayloadFixtures.schema, begin: begin, end: PayloadFixtures.checkpointEnd
        ) { sink in try sink.append(PayloadFixtures.checkpointChunk) }
        faults.onRead(nil)
        #expect(fired.current, "the copy read the log")
        // The writer finished the frame long ago; put it back as the disk holds it.
        let frame = try #require(unfinished.current)
        try LogFileSurgery.overwrite(path, at: frame.byteOffset, with: frame.bytes)
        let report = try writer.finishRewrite(prepared)
        #expect(report.copiedTransactionCount == 3)
        try writer.close()
        let replay = try Replay.read(path)
        #expect(replay.report.tail == .clean && replay.report.endsWithSeal)
        #expect(replay.transactions.map(\.id) == [4, 5, 6])
    }

    @Test("a rewrite leaves no zeros: the new file ends with its seal until an append grows it; close cuts them")
    func rewriteTrimsTheZeros() throws {
        let writer = try LogWriter(path: path, options: Self.preallocating)
        try writer.append(schema: PayloadFixtures.schema)
        for id in 1...UInt64(5) { try writer.appendTransaction(id: id, payload: TestLog.payload(for: id)) }
        #expect(try LogFileSurgery.size(of: path) > writer.byteCount, "zeros ahead before the rewrite")
        let anchor = try writer.rewriteAnchor()
        let begin = CheckpointBegin(
            lastTransactionID: anchor.lastTransactionID, lastCommitTimeMicroseconds: 1_700_000_000, nextKey: 99,
            objectCount: 3)
        let report = try writer.rewrite(
            schema: PayloadFixtures.schema, begin: begin, end: PayloadFixtures.checkpointEnd
        ) { sink in try sink.append(PayloadFixtures.checkpointChunk) }
        #expect(try LogFileSurgery.size(of: path) == report.newByteCount, "the rewritten file has no zeros")
        let sixth = try writer.appendTransaction(id: 6, payload: TestLog.payload(for: 6))
        #expect(try LogFileSurgery.size(of: path) > sixth.endByteOffset, "the next append that grows it writes zeros")
        try writer.close()
        #expect(try LogFileSurgery.size(of: path) == writer.byteCount, "closing cuts them off")
        #expect(try Replay.read(path).report.tail == .clean)
    }

    @Test("read-only scans beside a preallocating writer never find damage, and end at a committed transaction")
    func readOnlyScansBesideAWriter() throws {
        let writer = try LogWriter(path: path, options: Self.preallocating)
        try writer.append(schema: PayloadFixtures.schema)
        let done = SharedBox(false)
        let path = self.path
        let appender = Thread {
            for id in 1...UInt64(400) {
                _ = try? writer.appendTransaction(
                    id: id, payload: TestLog.payload(for: id, byteCount: 300 + Int(id % 7) * 90))
            }
            done.update { $0 = true }
        }
        appender.start()
        var scans = 0
        var last: UInt64 = 0
        while !done.current || scans == 0 {
            let report = try LogReader(path: path).scan { _ in }
            if case .damaged(let damage) = report.tail {
                Issue.record("scan \(scans) beside the writer found damage: \(damage.summary)")
                break
            }
            #expect(report.lastTransactionID >= last, "a later scan sees at least what an earlier one saw")
            last = report.lastTransactionID
            scans += 1
        }
        try writer.close()
        let replay = try Replay.read(path)
        #expect(replay.report.tail == .clean && replay.transactions.count == 400)
    }
}
