import Dispatch
import Foundation
import Testing

@testable import LogFormat

/// A rewrite's full buffers are written on a thread of their own (``WriteBehind``): the file is the same bytes, the
/// frames after a stalled write are made meanwhile, a failed write fails the rewrite with nothing written after it,
/// and no write outlives a rewrite that failed or was cancelled (its temporary file is removed afterwards).
@Suite("Rewrite writes behind")
struct WriteBehindTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("store.eglog") }

    /// 1 MiB frames of incompressible bytes: four fill one of the writer's 4 MiB buffers.
    static let frameCount = 14
    static func payload(_ index: Int) -> [UInt8] { TestBytes.noise(1 << 20, salt: UInt64(index)) }

    /// What the writer wrote before the writes went behind: the header's region, then every frame's bytes in order
    /// (the last one a seal whose watermark is its own offset).
    static func expectedBytes(header: LogFileHeader) throws -> [UInt8] {
        var bytes = header.encodedRegion()
        #expect(UInt64(bytes.count) == LogFileHeader.framesByteOffset)
        var sequence = header.baseSequence
        for index in 0..<frameCount {
            let frame = OutgoingFrame(type: .blob, transactionID: 1, partIndex: UInt32(index), payload: payload(index))
            try frame.encodeBody(seed: header.checksumSeed, dictionary: nil).append(
                to: &bytes, sequence: sequence, durableWatermark: LogFileHeader.framesByteOffset,
                seed: header.checksumSeed)
            sequence += 1
        }
        let seal = try OutgoingFrame(type: .seal, payload: []).encodeBody(seed: header.checksumSeed, dictionary: nil)
        seal.append(
            to: &bytes, sequence: sequence, durableWatermark: UInt64(bytes.count), seed: header.checksumSeed)
        return bytes
    }

    /// Writes the frames with the sequential writer, calling `appended(i)` after frame `i`.
    func writeFrames(
        header: LogFileHeader, faults: FaultInjector? = nil, appended: (Int) -> Void = { _ in }
    ) throws {
        let file = try LogFile(path: path, flags: O_RDWR | O_CREAT | O_EXCL, faults: faults)
        var frames = try SequentialFrameWriter(file: file, header: header)
        for index in 0..<Self.frameCount {
            try frames.append(
                OutgoingFrame(type: .blob, transactionID: 1, partIndex: UInt32(index), payload: Self.payload(index)))
            appended(index)
        }
        try frames.finishWithSeal()
    }

    @Test("the file written behind is the bytes of its frames in order, each buffer's writeback started in order")
    func sameBytes() throws {
        let header = LogFileHeader(storeUUID: .random())
        let faults = FaultInjector()
        try writeFrames(header: header, faults: faults)
        let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(written == (try Self.expectedBytes(header: header)))
        let ranges = faults.startedWritebacks
        #expect(ranges.count >= 4, "\(ranges)")
        #expect(ranges.first?.lowerBound == LogFileHeader.framesByteOffset)
        #expect(ranges.last?.upperBound == UInt64(written.count))
        #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound }, "\(ranges)")
    }

    /// The first buffer's write is held until the writer has made the frames of the next two buffers (at most 60 s,
    /// so that a writer that waits for its own write does not hang the suite): before the writes went behind, the
    /// writer made no frame while its write stalled.
    @Test("frames after a stalled write are made while it stalls")
    func stalledWrite() throws {
        let header = LogFileHeader(storeUUID: .random())
        let faults = FaultInjector()
        let madeAhead = DispatchSemaphore(value: 0)
        let sawFramesMadeAhead = LockedValue<Bool?>(nil)
        faults.onWrite { _, byteOffset in
            guard byteOffset == LogFileHeader.framesByteOffset else { return }
            let made = madeAhead.wait(timeout: .now() + .seconds(60)) == .success
            sawFramesMadeAhead.withLock { $0 = made }
        }
        try writeFrames(header: header, faults: faults) { index in
            // Frames 0...3 fill the first buffer, 4...7 the second; frame 9 is in the third.
            if index == 9 { madeAhead.signal() }
        }
        #expect(sawFramesMadeAhead.withLock { $0 } == true)
        let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(written == (try Self.expectedBytes(header: header)))
    }

    /// A log of transactions 1...4, each with a 3 MiB blob of noise: a rewrite at 1 copies 9 MiB in three buffers.
    func makeLog() throws {
        let writer = try LogWriter(path: path)
        for id in 1...4 as ClosedRange<UInt64> {
            try writer.appendTransaction(
                id: id, payload: TestLog.payload(for: id), blobs: [TestBytes.noise(3 << 20, salt: id)])
        }
        try writer.close()
    }

    func openWriter(_ faults: FaultInjector) throws -> LogWriter {
        var options = LogWriter.Options()
        options.faultInjector = faults
        return try LogWriter(path: path, options: options)
    }

    func rewrite(_ writer: LogWriter, cancellation: RewriteCancellation? = nil) throws {
        let anchor = try writer.rewriteAnchor()
        let prepared = try writer.prepareRewrite(
            from: anchor,
            schema: SchemaPayload(modelName: "WriteBehind", versionIdentifier: "1", modelHash: 3, entities: []),
            begin: CheckpointBegin(lastTransactionID: 1, lastCommitTimeMicroseconds: 0, nextKey: 1, objectCount: 0),
            end: { CheckpointEnd(objectCount: 0, stateDigest: [1, 2, 3]) }, cancellation: cancellation
        ) { _ in }
        _ = try writer.finishRewrite(prepared, cancellation: cancellation)
    }

    func leftovers() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0 != "store.eglog" }
    }

    /// The `n`th write of the rewrite (1 is its header, 2... its buffers) fails or tears: the rewrite throws that
    /// write's error, no write is made after it, the log is as it was and still in use, and no temporary file is
    /// left.
    @Test(arguments: [2, 3, 4], [FaultInjector.Fault.fail(errno: EIO), .tear(errno: EIO)])
    func failedWrite(onCall n: Int, fault: FaultInjector.Fault) throws {
        try makeLog()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let faults = FaultInjector()
        let writer = try openWriter(faults)
        let writesBefore = faults.callCount(.write)
        faults.arm(.write, onCall: n, fault: fault)
        let error = #expect(throws: LogFormatError.self) { try rewrite(writer) }
        #expect(error?.code == .io)
        #expect(error?.message.contains("write") == true, "\(String(describing: error))")
        #expect(faults.callCount(.write) == writesBefore + n, "no write after the failed one")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try leftovers().isEmpty)
        try writer.appendTransaction(id: 5, payload: TestLog.payload(for: 5))
        try writer.close()
        #expect(try Replay.read(path).transactions == TestLog.expected(1...5))
    }

    /// Where a cancellation is raised: in the middle of a write of the new file (held 50 ms after), or at a stage.
    enum CancelPoint: String, CaseIterable {
        case duringWrite, checkpointWritten, copyingTail
    }

    /// A rewrite cancelled while its writes go on throws `closed` only once every write it began has ended; the log
    /// is as it was and still in use, and no temporary file is left.
    @Test(arguments: CancelPoint.allCases)
    func cancelledRewrite(at point: CancelPoint) throws {
        try makeLog()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let faults = FaultInjector()
        let writer = try openWriter(faults)
        let cancellation = RewriteCancellation()
        let writes = LockedValue((begun: 0, ended: 0))
        let logPath = path
        faults.onWrite { path, _ in
            guard path != logPath else { return }
            let begun = writes.withLock {
                $0.begun += 1
                return $0.begun
            }
            if point == .duringWrite && begun == 3 {
                cancellation.cancel()
                usleep(50_000)
            }
            writes.withLock { $0.ended += 1 }
        }
        faults.onRewriteStage { stage in
            if (point == .checkpointWritten && stage == .checkpointWritten)
                || (point == .copyingTail && stage == .copyingTail)
            {
                cancellation.cancel()
            }
        }
        let error = #expect(throws: LogFormatError.self) { try rewrite(writer, cancellation: cancellation) }
        #expect(error?.code == .closed, "\(String(describing: error))")
        let counted = writes.withLock { $0 }
        #expect(counted.begun >= 1 && counted.ended == counted.begun, "\(counted)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try leftovers().isEmpty)
        try writer.appendTransaction(id: 5, payload: TestLog.payload(for: 5))
        try writer.close()
        #expect(try Replay.read(path).transactions == TestLog.expected(1...5))
    }
}
