import Foundation
import Testing

@testable import LogFormat

/// Every frame type written by LogFormat reads back exactly, with the codec the compression policy promises.
@Suite("Frame round trips")
struct FrameRoundTripTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("store.eglog") }

    private static let payloads: [(name: String, bytes: [UInt8])] = [
        ("empty", []), ("one byte", [42]), ("255 compressible bytes", TestBytes.text(255)),
        ("256 compressible bytes", TestBytes.text(256)), ("5,000 random bytes", TestBytes.noise(5000)),
        ("200,000 compressible bytes", TestBytes.text(200_000)),
    ]

    @Test("a whole-transaction frame round-trips", arguments: payloads.indices)
    func wholeTransaction(index: Int) throws {
        let payload = Self.payloads[index].bytes
        let writer = try LogWriter(path: path)
        let appended = try writer.appendTransaction(id: 7, payload: payload)
        try writer.close()

        let replay = try Replay.read(path)
        #expect(replay.transactions == [ReplayedTransaction(id: 7, payload: payload)])
        let (header, body) = try LogReader(path: path).readFrame(at: appended.byteOffset)
        #expect(header.type == .transaction)
        #expect(header.transactionID == 7)
        #expect(body == payload)
        #expect(appended.endByteOffset == appended.byteOffset + header.frameByteCount)
    }

    @Test("random bytes are stored raw; compressible bytes from 256 up are stored as LZ4", arguments: payloads.indices)
    func codecFollowsThePolicy(index: Int) throws {
        let (name, payload) = Self.payloads[index]
        let writer = try LogWriter(path: path)
        let appended = try writer.appendTransaction(id: 1, payload: payload)
        let (header, body) = try LogReader(path: path).readFrame(at: appended.byteOffset)
        #expect(body == payload)
        #expect(Int(header.rawByteCount) == payload.count)
        if name.contains("compressible"), payload.count >= CompressionPolicy.minimumByteCount {
            #expect(header.codec == .lz4, "\(name)")
            #expect(Int(header.bodyByteCount) <= payload.count - payload.count / 8)
        } else {
            #expect(header.codec == .raw, "\(name)")
            #expect(Int(header.bodyByteCount) == payload.count)
        }
    }

    @Test("a transaction bigger than fragmentByteCount is split into first/middle/last fragments and reassembled")
    func fragmentedTransaction() throws {
        var options = LogWriter.Options()
        options.fragmentByteCount = 100
        let writer = try LogWriter(path: path, options: options)
        let payload = TestBytes.noise(1_050)
        try writer.appendTransaction(id: 1, payload: [1])
        let appended = try writer.appendTransaction(id: 2, payload: payload, blobs: [[9, 8, 7]])
        try writer.appendTransaction(id: 3, payload: TestBytes.noise(200))  // exactly two fragments
        try writer.close()

        let frames = try FrameMap.frames(in: path)
        let second = frames.filter { $0.header.transactionID == 2 }
        #expect(
            second.map(\.header.type) == [.blob, .transactionFirst] + Array(repeating: .transactionMiddle, count: 9) + [
                .transactionLast
            ])
        #expect(second.dropFirst().map(\.header.partIndex) == Array(0...10))
        #expect(second.first?.byteOffset == appended.byteOffset)
        #expect(second.last?.endByteOffset == appended.endByteOffset)
        #expect(
            frames.filter { $0.header.transactionID == 3 }.map(\.header.type) == [.transactionFirst, .transactionLast])

        let replay = try Replay.read(path)
        #expect(
            replay.transactions == [
                ReplayedTransaction(id: 1, payload: [1]), ReplayedTransaction(id: 2, payload: payload),
                ReplayedTransaction(id: 3, payload: TestBytes.noise(200)),
            ])
    }

    @Test("blobs land before their transaction and read back by offset")
    func blobs() throws {
        let writer = try LogWriter(path: path)
        let blobs = [TestBytes.noise(10), [], TestBytes.text(70_000)]
        let appended = try writer.appendTransaction(id: 1, payload: [1, 2], blobs: blobs)
        #expect(appended.blobs.map(\.index) == [0, 1, 2])
        #expect(appended.blobs.map { Int($0.byteCount) } == blobs.map(\.count))
        try writer.close()

        let reader = try LogReader(path: path)
        #expect(try appended.blobs.map { try reader.readBlob(at: $0.byteOffset) } == blobs)
        var delivered: [BlobLocation] = []
        try reader.scan { record in
            if case .transaction(let transaction) = record { delivered = transaction.blobs }
        }
        #expect(delivered == appended.blobs)
        #expect(delivered.first?.byteOffset == appended.byteOffset)

        let notABlob = #expect(throws: LogFormatError.self) { _ = try reader.readBlob(at: appended.endByteOffset - 56) }
        #expect(notABlob?.code == .invalidArgument)
        let unaligned = #expect(throws: LogFormatError.self) { _ = try reader.readFrame(at: appended.byteOffset + 4) }
        #expect(unaligned?.code == .invalidArgument)
        let inHeader = #expect(throws: LogFormatError.self) { _ = try reader.readFrame(at: 512) }
        #expect(inHeader?.code == .invalidArgument)
    }

    @Test("a schema frame round-trips")
    func schema() throws {
        let writer = try LogWriter(path: path)
        try writer.append(schema: PayloadFixtures.schema)
        try writer.appendTransaction(id: 1, payload: [1])
        try writer.close()

        let records = try Replay.read(path).records
        guard case .schema(let schema, let byteOffset) = records.first else {
            Issue.record("expected a schema first, got \(records)")
            return
        }
        #expect(schema == PayloadFixtures.schema)
        #expect(byteOffset == LogFileHeader.framesByteOffset)
    }

    @Test("a checkpoint written by rewrite round-trips: begin, chunks, blobs, end, then the copied tail")
    func checkpoint() throws {
        let writer = try LogWriter(path: path)
        try writer.append(schema: PayloadFixtures.schema)
        for id in 1...4 as ClosedRange<UInt64> {
            try writer.appendTransaction(id: id, payload: TestLog.payload(for: id), blobs: id == 4 ? [[4, 4]] : [])
        }
        let begin = CheckpointBegin(
            lastTransactionID: 2, lastCommitTimeMicroseconds: 1_700_000_000, nextKey: 99, objectCount: 3)
        let reference = BlobReference(transactionID: 2, index: 0, byteCount: 5)
        let report = try writer.rewrite(
            schema: PayloadFixtures.schema, begin: begin, end: PayloadFixtures.checkpointEnd
        ) {
            sink in
            try sink.append(PayloadFixtures.checkpointChunk)
            try sink.appendBlob(reference, bytes: [1, 2, 3, 4, 5])
            try sink.append(CheckpointChunk(records: []))
        }
        #expect(report.generation == 1)
        #expect(report.copiedTransactionCount == 2)
        try writer.appendTransaction(id: 5, payload: TestLog.payload(for: 5))
        try writer.close()

        let reader = try LogReader(path: path)
        #expect(reader.header.generation == 1)
        var kinds: [String] = []
        var chunks: [CheckpointChunk] = []
        var blob: [UInt8]?
        var transactions: [UInt64] = []
        try reader.scan { record in
            switch record {
            case .schema(let schema, _): kinds.append("schema"); #expect(schema == PayloadFixtures.schema)
            case .checkpointBegin(let value, _): kinds.append("begin"); #expect(value == begin)
            case .checkpointChunk(let chunk, _): kinds.append("chunk"); chunks.append(chunk)
            case .checkpointBlob(let location):
                kinds.append("blob")
                #expect(location == report.checkpointBlobs.first)
                #expect(location.transactionID == 2 && location.index == 0)
                blob = try reader.readBlob(at: location.byteOffset)
            case .checkpointEnd(let end, _): kinds.append("end"); #expect(end == PayloadFixtures.checkpointEnd)
            case .transaction(let t): kinds.append("transaction"); transactions.append(t.transactionID)
            case .seal: kinds.append("seal")
            default: kinds.append("other")
            }
        }
        #expect(
            kinds == [
                "schema", "begin", "chunk", "blob", "chunk", "end", "transaction", "transaction", "seal",
                "transaction", "seal",
            ])
        #expect(chunks == [PayloadFixtures.checkpointChunk, CheckpointChunk(records: [])])
        #expect(blob == [1, 2, 3, 4, 5])
        #expect(transactions == [3, 4, 5])
    }

    @Test("close writes a seal that proves everything before it")
    func seal() throws {
        let writer = try LogWriter(path: path)
        try writer.appendTransaction(id: 1, payload: [1])
        try writer.close()
        try writer.close()  // idempotent
        let closed = #expect(throws: LogFormatError.self) { try writer.appendTransaction(id: 2, payload: [2]) }
        #expect(closed?.code == .closed)

        let replay = try Replay.read(path)
        #expect(replay.report.endsWithSeal)
        guard case .seal(let byteOffset) = replay.records.last else {
            Issue.record("expected a seal last, got \(replay.records)")
            return
        }
        let frame = try #require(try FrameMap.frames(in: path).last)
        #expect(frame.byteOffset == byteOffset)
        #expect(frame.header.durableWatermark == byteOffset)
    }

    /// Writes transaction 1, a frame of `type`, and transaction 2 with the low-level sequential writer.
    private func writeLog(withFrameOfType type: FrameType, payload: [UInt8]) throws {
        let file = try LogFile(path: path, flags: O_RDWR | O_CREAT | O_EXCL, faults: nil)
        var frames = try SequentialFrameWriter(file: file, header: LogFileHeader(storeUUID: .random()))
        try frames.append(OutgoingFrame(type: .transaction, transactionID: 1, payload: [1]))
        try frames.append(OutgoingFrame(type: type, payload: payload))
        try frames.append(OutgoingFrame(type: .transaction, transactionID: 2, payload: [2]))
        try frames.finishWithSeal()
    }

    @Test(
        "a skippable extension frame (type 0x80 and up) is delivered and skipped",
        arguments: [0x80, 0x9C, 0xFF] as [UInt8])
    func skippableExtension(rawType: UInt8) throws {
        try writeLog(withFrameOfType: FrameType(rawValue: rawType), payload: TestBytes.text(1000))
        let replay = try Replay.read(path)
        #expect(replay.transactions.map(\.id) == [1, 2])
        #expect(replay.report.tail == .clean)
        let extensions = replay.records.compactMap { record -> (FrameType, [UInt8])? in
            if case .extensionFrame(let type, let payload, _) = record { (type, payload) } else { nil }
        }
        #expect(extensions.map(\.0) == [FrameType(rawValue: rawType)])
        #expect(extensions.first?.1 == TestBytes.text(1000))

        let writer = try LogWriter(path: path)
        try writer.appendTransaction(id: 3, payload: [3])
        try writer.close()
        #expect(try Replay.read(path).transactions.map(\.id) == [1, 2, 3])
    }

    @Test(
        "an unknown frame type below 0x80 is refused with unsupportedFeature", arguments: [0x06, 0x50, 0x7F] as [UInt8])
    func unknownRequiredFrameType(rawType: UInt8) throws {
        try writeLog(withFrameOfType: FrameType(rawValue: rawType), payload: [1, 2, 3])
        let extensionOffset = try #require(try FrameMap.frames(in: path).dropFirst().first?.byteOffset)
        let readError = #expect(throws: LogFormatError.self) { try LogReader(path: path).scan() }
        #expect(readError?.code == .unsupportedFeature)
        #expect(readError?.byteOffset == extensionOffset)
        #expect(readError?.message.contains("0x\(String(rawType, radix: 16))") == true)
        let writeError = #expect(throws: LogFormatError.self) { _ = try LogWriter(path: path) }
        #expect(writeError?.code == .unsupportedFeature)
    }
}

/// CRC32C: the hardware and table paths agree, and both match the standard check value.
@Suite("CRC32C")
struct CRC32CTests {
    @Test("the check value of \"123456789\" is 0xE3069283 on both paths")
    func knownVector() {
        let bytes = Array("123456789".utf8)
        #expect(CRC32C.checksum(bytes) == 0xE306_9283)
        #expect(CRC32C.portableChecksum(bytes) == 0xE306_9283)
        print("CRC32C hardware acceleration: \(CRC32C.isHardwareAccelerated)")
    }

    @Test(
        "hardware and portable checksums agree",
        arguments: [0, 1, 3, 7, 8, 9, 15, 16, 63, 64, 65, 255, 4096, 4099, 100_003])
    func pathsAgree(byteCount: Int) {
        let bytes = TestBytes.noise(byteCount, salt: UInt64(byteCount))
        for seed in [0, 1, 0xFFFF_FFFF, 0xE306_9283] as [UInt32] {
            #expect(CRC32C.checksum(bytes, continuing: seed) == CRC32C.portableChecksum(bytes, continuing: seed))
        }
        // Unaligned starts take a different path through the hardware loop.
        for start in 1..<max(1, min(8, byteCount)) {
            let slice = Array(bytes[start...])
            #expect(CRC32C.checksum(slice) == CRC32C.portableChecksum(slice))
        }
    }

    /// The hardware path hashes buffers of three 256-byte or 8 KiB blocks and more as three interleaved streams,
    /// joined by shifting over a block of zeros: every length around those thresholds, from every start, with a
    /// seed, is the one chain the portable table computes.
    @Test(
        "three interleaved streams give the one chain's checksum",
        arguments: [767, 768, 769, 775, 776, 1_023, 1_536, 24_575, 24_576, 24_577, 24_584, 49_152, 73_735, 1 << 20])
    func interleavedStreamsAgree(byteCount: Int) {
        let bytes = TestBytes.noise(byteCount + 8, salt: UInt64(byteCount) &* 31)
        for start in [0, 1, 5, 8] {
            let slice = Array(bytes[start..<start + byteCount])
            #expect(CRC32C.checksum(slice) == CRC32C.portableChecksum(slice))
            let seed: UInt32 = 0x8A91_36AA
            #expect(CRC32C.checksum(slice, continuing: seed) == CRC32C.portableChecksum(slice, continuing: seed))
        }
        // A buffer of zeros (the shift's own operand) and one of ones.
        for fill in [0x00, 0xFF] as [UInt8] {
            let uniform = [UInt8](repeating: fill, count: byteCount)
            #expect(CRC32C.checksum(uniform) == CRC32C.portableChecksum(uniform))
        }
    }

    @Test("checksums continue across pieces", arguments: [0, 1, 5, 64, 999])
    func continuation(split: Int) {
        let bytes = TestBytes.noise(1000)
        let whole = CRC32C.checksum(bytes)
        let first = CRC32C.checksum(Array(bytes[..<split]))
        #expect(CRC32C.checksum(Array(bytes[split...]), continuing: first) == whole)
        #expect(CRC32C.portableChecksum(Array(bytes[split...]), continuing: first) == whole)
    }
}
