import Foundation
import Testing

@testable import LogFormat

/// A value shared with a thread the test starts.
private final class LockedBox<Value: Sendable>: @unchecked Sendable {
    // @unchecked: every access to `value` holds `lock`.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
    func get() -> Value { lock.withLock { value } }
}

/// A rewrite in two phases: the checkpoint is written while appends go on, and the transactions appended since the
/// anchor are copied, from the anchor's byte offset, when the rewrite finishes.
@Suite("Rewrite beside appends")
struct RewriteBesideAppendsTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("store.eglog") }

    /// A checkpoint at `transactionID` with one blob of transaction 1.
    private func prepare(_ writer: LogWriter, at anchor: RewriteAnchor) throws -> PreparedRewrite {
        let begin = CheckpointBegin(
            lastTransactionID: anchor.lastTransactionID, lastCommitTimeMicroseconds: 1_700_000_000, nextKey: 99,
            objectCount: 3)
        return try writer.prepareRewrite(
            from: anchor, schema: PayloadFixtures.schema, begin: begin, end: PayloadFixtures.checkpointEnd
        ) { sink in
            try sink.append(PayloadFixtures.checkpointChunk)
            try sink.appendBlob(BlobReference(transactionID: 1, index: 0, byteCount: 3), bytes: [1, 1, 1])
        }
    }

    @Test func transactionsAppendedWhileTheCheckpointIsWrittenAreCopiedAfterIt() throws {
        let writer = try LogWriter(path: path)
        try writer.append(schema: PayloadFixtures.schema)
        for id in 1...3 as ClosedRange<UInt64> {
            try writer.appendTransaction(id: id, payload: TestLog.payload(for: id), blobs: id == 1 ? [[1, 1, 1]] : [])
        }
        let anchor = try writer.rewriteAnchor()
        let prepared = try prepare(writer, at: anchor)
        // Appends go on between the phases; one with two blobs.
        try writer.appendTransaction(id: 4, payload: TestLog.payload(for: 4))
        try writer.appendTransaction(id: 5, payload: TestLog.payload(for: 5), blobs: [[5, 0], [5, 1, 1]])
        let report = try writer.finishRewrite(prepared)
        #expect(report.copiedTransactionCount == 2)
        #expect(report.copiedBlobs.map(\.index) == [0, 1])
        try writer.appendTransaction(id: 6, payload: TestLog.payload(for: 6))
        try writer.close()

        let reader = try LogReader(path: path)
        #expect(reader.header.generation == 1)
        for blob in report.copiedBlobs {
            #expect(try reader.readBlob(at: blob.byteOffset) == (blob.index == 0 ? [5, 0] : [5, 1, 1]))
        }
        var checkpoint: UInt64?
        var tail: [UInt64] = []
        var payloads: [[UInt8]] = []
        let scan = try reader.scan { record in
            if case .checkpointBegin(let begin, _) = record { checkpoint = begin.lastTransactionID }
            if case .transaction(let transaction) = record {
                tail.append(transaction.transactionID)
                payloads.append(try transaction.payload)
            }
        }
        #expect(payloads == tail.map { TestLog.payload(for: $0) })
        #expect(scan.tail == .clean)
        #expect(checkpoint == 3)
        #expect(tail == [4, 5, 6])
    }

    /// A transaction queued in the old file whose thread waits for it after the rewrite adopted a shorter new file:
    /// its offsets are the old file's, so the wait must not compare them with the new file's (before the writer
    /// counted its files, the wait never ended: the new file's end stayed below the old offset, and the waiting
    /// thread led empty batches for ever; under load the subtraction of a later batch's end could also overflow).
    @Test func aWaitForATransactionOfTheReplacedFileEndsAndFindsItCopied() throws {
        let writer = try LogWriter(path: path, options: .init(durability: .full))
        try writer.append(schema: PayloadFixtures.schema)
        // A long old log, so that the new file (a small checkpoint and the copied tail) is shorter.
        let big = [UInt8](repeating: 7, count: 64 * 1024)
        for id in 1...3 as ClosedRange<UInt64> {
            try writer.appendTransaction(id: id, payload: big, blobs: id == 1 ? [[1, 1, 1]] : [])
        }
        let anchor = try writer.rewriteAnchor()
        let prepared = try prepare(writer, at: anchor)
        // Queued but not waited for: its ticket carries offsets in the old file, far beyond the new file's end.
        let ticket = try writer.enqueueTransaction(id: 4, payload: TestLog.payload(for: 4))
        let report = try writer.finishRewrite(prepared)
        #expect(report.copiedTransactionCount == 1)
        let finished = DispatchSemaphore(value: 0)
        let outcome = LockedBox<Result<Void, LogFormatError>?>(nil)
        Thread.detachNewThread {
            do throws(LogFormatError) {
                try writer.waitUntilDurable(ticket)
                outcome.set(.success(()))
            } catch {
                outcome.set(.failure(error))
            }
            finished.signal()
        }
        #expect(finished.wait(timeout: .now() + 600) == .success, "the wait for a copied transaction never ended")
        guard case .success = outcome.get() else {
            Issue.record("the wait for a copied transaction failed: \(String(describing: outcome.get()))")
            return
        }
        try writer.appendTransaction(id: 5, payload: TestLog.payload(for: 5))
        try writer.close()
        var tail: [UInt64] = []
        _ = try LogReader(path: path).scan { record in
            if case .transaction(let transaction) = record { tail.append(transaction.transactionID) }
        }
        #expect(tail == [4, 5])
    }

    @Test func aRewriteFromAReplacedFileIsRefusedAndLeavesNothing() throws {
        let writer = try LogWriter(path: path)
        try writer.append(schema: PayloadFixtures.schema)
        try writer.appendTransaction(id: 1, payload: TestLog.payload(for: 1), blobs: [[1, 1, 1]])
        let anchor = try writer.rewriteAnchor()
        let first = try prepare(writer, at: anchor)
        let second = try prepare(writer, at: anchor)
        _ = try writer.finishRewrite(first)
        let error = #expect(throws: LogFormatError.self) { try writer.finishRewrite(second) }
        #expect(error?.code == .invalidArgument)
        #expect(!FileManager.default.fileExists(atPath: second.path))
        // The writer goes on with the first rewrite's file.
        try writer.appendTransaction(id: 2, payload: TestLog.payload(for: 2))
        try writer.close()
        #expect(try LogReader(path: path).scan().lastTransactionID == 2)
    }

    @Test func aPreparedRewriteThatIsDroppedRemovesItsFile() throws {
        let writer = try LogWriter(path: path)
        try writer.append(schema: PayloadFixtures.schema)
        try writer.appendTransaction(id: 1, payload: TestLog.payload(for: 1), blobs: [[1, 1, 1]])
        var temporary = ""
        do {
            let prepared = try prepare(writer, at: try writer.rewriteAnchor())
            temporary = prepared.path
            #expect(FileManager.default.fileExists(atPath: temporary))
        }
        #expect(!FileManager.default.fileExists(atPath: temporary))
        try writer.close()
    }
}
