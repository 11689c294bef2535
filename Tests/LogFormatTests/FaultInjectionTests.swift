import Foundation
import Testing

@testable import LogFormat

/// Failing file operations (through ``FaultInjector``): the failing call says what failed, the writer is poisoned
/// where it must be, and reopening always finds a consistent log with exactly the acknowledged transactions.
@Suite("Fault injection")
struct FaultInjectionTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("store.eglog") }

    /// A writer on a log that already holds transactions 1...3 (so that creation's I/O is not counted).
    private func openWriter(
        _ faults: FaultInjector, durability: Durability = .full
    ) throws -> LogWriter {
        if !FileManager.default.fileExists(atPath: path) {
            let writer = try LogWriter(path: path)
            for id in 1...3 as ClosedRange<UInt64> {
                try writer.appendTransaction(id: id, payload: TestLog.payload(for: id))
            }
            try writer.close()
        }
        var options = LogWriter.Options(durability: durability)
        options.faultInjector = faults
        return try LogWriter(path: path, options: options)
    }

    /// The error names the operation and the file (the log, or its temporary file during a rewrite).
    private func expectIOError(
        _ error: LogFormatError?, operation: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(error?.code == .io, sourceLocation: sourceLocation)
        #expect(error?.systemErrno == EIO, sourceLocation: sourceLocation)
        #expect(
            error?.message.contains(operation) == true, "message: \(error?.message ?? "none")",
            sourceLocation: sourceLocation)
        #expect(
            error?.description.contains(directory.path + "/") == true, "description: \(error?.description ?? "none")",
            sourceLocation: sourceLocation)
        #expect(error?.description.contains("store.eglog") == true, sourceLocation: sourceLocation)
    }

    /// After a failed append: the writer refuses everything, and never retries.
    private func expectPoisoned(_ writer: LogWriter, sourceLocation: SourceLocation = #_sourceLocation) {
        let append = #expect(throws: LogFormatError.self, sourceLocation: sourceLocation) {
            try writer.appendTransaction(id: 100, payload: [1])
        }
        #expect(append?.code == .poisoned, sourceLocation: sourceLocation)
        #expect(append?.message.contains("reopen") == true, sourceLocation: sourceLocation)
        let sync = #expect(throws: LogFormatError.self, sourceLocation: sourceLocation) { try writer.sync() }
        #expect(sync?.code == .poisoned, sourceLocation: sourceLocation)
        let close = #expect(throws: LogFormatError.self, sourceLocation: sourceLocation) { try writer.close() }
        #expect(close?.code == .poisoned, sourceLocation: sourceLocation)
    }

    // MARK: - Appends

    @Test(
        "a failed write throws, poisons the writer, and the failed transaction is gone after reopening",
        arguments: [1, 3])
    func failedWrite(onCall n: Int) throws {
        let faults = FaultInjector()
        do {
            let writer = try openWriter(faults)
            faults.arm(.write, onCall: n, fault: .fail(errno: EIO))
            for id in 4..<(3 + UInt64(n)) { try writer.appendTransaction(id: id, payload: TestLog.payload(for: id)) }
            let failing = 3 + UInt64(n)
            let error = #expect(throws: LogFormatError.self) {
                try writer.appendTransaction(id: failing, payload: TestLog.payload(for: failing))
            }
            expectIOError(error, operation: "write")
            #expect(faults.firedFaults == [.write])
            let syncsBefore = faults.callCount(.sync)
            expectPoisoned(writer)
            #expect(faults.callCount(.sync) == syncsBefore, "a poisoned writer must never retry fdatasync")
        }
        let replay = try Replay.read(path)
        #expect(replay.transactions == TestLog.expected(1...(2 + UInt64(n))))
        #expect(replay.report.tail == .clean)
        #expect(try LogWriter(path: path).lastTransactionID == 2 + UInt64(n))
    }

    @Test(
        "a write torn in half: the failed transaction never reappears, whether or not the writer's cleanup works",
        arguments: [false, true])
    func tornWrite(cleanupFails: Bool) throws {
        let faults = FaultInjector()
        let sizeBefore: UInt64
        do {
            let writer = try openWriter(faults)
            sizeBefore = writer.byteCount
            faults.arm(.write, fault: .tear(errno: EIO))
            // When the writer's best-effort cleanup (truncate) fails too, the torn half stays on disk.
            if cleanupFails { faults.arm(.truncate, fault: .fail(errno: EIO)) }
            let error = #expect(throws: LogFormatError.self) {
                try writer.appendTransaction(id: 4, payload: TestLog.payload(for: 4, byteCount: 2000))
            }
            expectIOError(error, operation: "write")
            #expect(error?.message.contains("tear") == true)
            expectPoisoned(writer)
        }
        let sizeAfterFailure = try LogFileSurgery.size(of: path)
        #expect(cleanupFails ? sizeAfterFailure > sizeBefore : sizeAfterFailure == sizeBefore)
        let replay = try Replay.read(path)
        #expect(replay.transactions == TestLog.expected(1...3))
        #expect(replay.report.tail == .clean || replay.report.tail.byteOffset == sizeBefore)

        let reopened = try LogWriter(path: path)
        #expect(reopened.recoveryReport.truncatedTail?.byteOffset == (cleanupFails ? sizeBefore : nil))
        #expect(reopened.lastTransactionID == 3)
        #expect(try LogFileSurgery.size(of: path) == sizeBefore)
        try reopened.appendTransaction(id: 4, payload: TestLog.payload(for: 4))
        try reopened.close()
        #expect(try Replay.read(path).transactions == TestLog.expected(1...4))
    }

    @Test("a failed fdatasync throws, poisons the writer, and is never retried")
    func failedSync() throws {
        let faults = FaultInjector()
        do {
            let writer = try openWriter(faults)
            try writer.appendTransaction(id: 4, payload: TestLog.payload(for: 4))
            faults.arm(.sync, fault: .fail(errno: EIO))
            let error = #expect(throws: LogFormatError.self) {
                try writer.appendTransaction(id: 5, payload: TestLog.payload(for: 5))
            }
            expectIOError(error, operation: "fdatasync")
            let syncsBefore = faults.callCount(.sync)
            expectPoisoned(writer)
            #expect(faults.callCount(.sync) == syncsBefore)
        }
        // The unacknowledged transaction was cut off again (best effort), so only acknowledged ones remain.
        let replay = try Replay.read(path)
        #expect(replay.transactions == TestLog.expected(1...4))
        #expect(try LogWriter(path: path).lastTransactionID == 4)
    }

    @Test("a failed fdatasync in .normal durability poisons the writer at the next append")
    func failedBackgroundSync() throws {
        let faults = FaultInjector()
        let writer = try openWriter(faults, durability: .normal)
        faults.arm(.sync, fault: .fail(errno: EIO))
        try writer.appendTransaction(id: 4, payload: TestLog.payload(for: 4))
        let error = #expect(throws: LogFormatError.self) { try writer.sync() }
        expectIOError(error, operation: "fdatasync")
        expectPoisoned(writer)
    }

    // MARK: - Recovery

    @Test("a failed truncate during recovery refuses to open and leaves the file as it was")
    func failedRecoveryTruncate() throws {
        try TestLog.make(at: path, transactionCount: 3)
        let size = try LogFileSurgery.size(of: path)
        try LogFileSurgery.append(path, [UInt8](repeating: 0xA5, count: 100))
        let faults = FaultInjector()
        faults.arm(.truncate, fault: .fail(errno: EIO))
        var options = LogWriter.Options()
        options.faultInjector = faults
        let error = #expect(throws: LogFormatError.self) { _ = try LogWriter(path: path, options: options) }
        expectIOError(error, operation: "truncate")
        #expect(try LogFileSurgery.size(of: path) == size + 100)

        let writer = try LogWriter(path: path)
        #expect(
            writer.recoveryReport.truncatedTail
                == TornTail(
                    byteOffset: size, byteCount: 100, reason: writer.recoveryReport.truncatedTail?.reason ?? ""))
        #expect(writer.lastTransactionID == 3)
    }

    @Test("a failed fdatasync after the recovery truncate refuses to open; the next open is clean")
    func failedRecoverySync() throws {
        try TestLog.make(at: path, transactionCount: 3)
        try LogFileSurgery.append(path, [UInt8](repeating: 0xA5, count: 100))
        let faults = FaultInjector()
        faults.arm(.sync, fault: .fail(errno: EIO))
        var options = LogWriter.Options()
        options.faultInjector = faults
        let error = #expect(throws: LogFormatError.self) { _ = try LogWriter(path: path, options: options) }
        expectIOError(error, operation: "fdatasync")
        #expect(try LogWriter(path: path).lastTransactionID == 3)
        #expect(try Replay.read(path).transactions == TestLog.expected(1...3))
    }

    // MARK: - Atomic rewrite

    private func rewrite(_ writer: LogWriter, at transactionID: UInt64) throws -> RewriteReport {
        try writer.rewrite(
            schema: SchemaPayload(modelName: "Faults", versionIdentifier: "1", modelHash: 3, entities: []),
            begin: CheckpointBegin(
                lastTransactionID: transactionID, lastCommitTimeMicroseconds: 0, nextKey: 1, objectCount: 0),
            end: CheckpointEnd(objectCount: 0, stateDigest: [1, 2, 3])
        ) { _ in }
    }

    private func leftovers() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".store.eglog.") }
    }

    @Test(
        "a rewrite failing before the rename keeps the old file intact and in use",
        arguments: [FaultInjector.Operation.write, .sync, .rename])
    func failedRewriteBeforeRename(operation: FaultInjector.Operation) throws {
        let faults = FaultInjector()
        let writer = try openWriter(faults)
        let before = try LogFileSurgery.bytes(of: path)
        faults.arm(operation, fault: .fail(errno: EIO))
        let error = #expect(throws: LogFormatError.self) { _ = try rewrite(writer, at: 2) }
        expectIOError(error, operation: operation == .sync ? "fdatasync" : "\(operation)")
        #expect(try LogFileSurgery.bytes(of: path) == before)
        #expect(try leftovers().isEmpty, "the temporary file is removed")

        // The writer is still usable, on the old file.
        try writer.appendTransaction(id: 4, payload: TestLog.payload(for: 4))
        #expect(writer.header.generation == 0)
        try writer.close()
        let replay = try Replay.read(path)
        #expect(replay.transactions == TestLog.expected(1...4))
        #expect(!replay.records.contains { if case .checkpointBegin = $0 { true } else { false } })
    }

    @Test("a failed directory sync after the rename poisons the writer; the new file is complete")
    func failedDirectorySyncAfterRename() throws {
        let faults = FaultInjector()
        do {
            let writer = try openWriter(faults)
            faults.arm(.directorySync, fault: .fail(errno: EIO))
            let error = #expect(throws: LogFormatError.self) { _ = try rewrite(writer, at: 2) }
            expectIOError(error, operation: "directory fsync")
            expectPoisoned(writer)
        }
        #expect(try leftovers().isEmpty)
        let reopened = try LogWriter(path: path)
        #expect(reopened.header.generation == 1)
        #expect(reopened.lastTransactionID == 3)
        #expect(reopened.recoveryReport.truncatedTail == nil)
        let replay = try Replay.read(path)
        #expect(replay.transactions == TestLog.expected(3...3), "the checkpoint covers 1...2, transaction 3 is copied")
        #expect(replay.report.endsWithSeal)
    }

    @Test("a rewrite starts the writeback of every byte it writes after the header, in order, before it syncs")
    func rewriteStartsWriteback() throws {
        // Transactions with 3 MiB blobs of random bytes (incompressible): the rewrite's new file takes several of
        // the 4 MiB writes whose writeback it starts.
        do {
            let writer = try LogWriter(path: path)
            for id in 1...4 as ClosedRange<UInt64> {
                let blob = TestBytes.noise(3 << 20, salt: id)
                try writer.appendTransaction(id: id, payload: TestLog.payload(for: id), blobs: [blob])
            }
            try writer.close()
        }
        let faults = FaultInjector()
        let writer = try openWriter(faults)
        let report = try rewrite(writer, at: 1)
        try writer.close()
        let ranges = faults.startedWritebacks
        #expect(ranges.count >= 3, "\(ranges)")
        #expect(ranges.first?.lowerBound == LogFileHeader.framesByteOffset)
        #expect(ranges.last?.upperBound == report.newByteCount)
        #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound }, "\(ranges)")
        #expect(try Replay.read(path).transactions == TestLog.expected(2...4))
    }

    @Test(
        "leftovers of an interrupted rewrite or create are removed by the next open",
        arguments: ["rewrite-1a2b3c", "create-77", "salvage-ff"])
    func leftoversRemoved(suffix: String) throws {
        try TestLog.make(at: path, transactionCount: 2)
        let leftover = directory.file(".store.eglog.\(suffix)")
        try LogFileSurgery.write([1, 2, 3], to: leftover)
        let unrelated = directory.file(".store.eglog.keep")
        try LogFileSurgery.write([4], to: unrelated)

        let writer = try LogWriter(path: path)
        #expect(writer.recoveryReport.removedLeftovers == [leftover])
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(FileManager.default.fileExists(atPath: unrelated))
        #expect(writer.lastTransactionID == 2)
    }

    @Test("a failed rename while creating a log leaves nothing behind")
    func failedCreate() throws {
        let faults = FaultInjector()
        faults.arm(.rename, fault: .fail(errno: EIO))
        var options = LogWriter.Options()
        options.faultInjector = faults
        let error = #expect(throws: LogFormatError.self) { _ = try LogWriter(path: path, options: options) }
        #expect(error?.code == .io)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try leftovers().isEmpty)
        #expect(try LogWriter(path: path).recoveryReport.created)
    }
}
