import TestSupport
import Testing

@testable import LogFormat

/// One test per kind of damage: what a read-only scan reports, and what opening for writing does.
///
/// The logs here hold transactions of 100 incompressible bytes, so every transaction is one 152-byte frame and
/// frames can be swapped or copied. They are written with `.full` durability (each frame's watermark proves the
/// frames before it were synced) and, unless a test says otherwise, closed with a seal (which proves everything).
@Suite("Damage detection and classification")
struct DamageTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("store.eglog") }

    // MARK: - The file header

    @Test("a bad checksum in one header copy still opens, and says so", arguments: [40, 512 + 40])
    func oneHeaderCopyDamaged(byteOffset: UInt64) throws {
        try TestLog.make(at: path, transactionCount: 5)
        try LogFileSurgery.flipBit(path, byteOffset: byteOffset, bit: 3)

        let replay = try Replay.read(path)
        #expect(replay.report.headerCopyDamaged)
        #expect(replay.report.tail == .clean)
        #expect(replay.transactions == TestLog.expected(1...5))

        let writer = try LogWriter(path: path)
        #expect(writer.recoveryReport.headerCopyDamaged)
        #expect(writer.lastTransactionID == 5)
    }

    @Test("bad checksums in both header copies refuse to open")
    func bothHeaderCopiesDamaged() throws {
        try TestLog.make(at: path, transactionCount: 5)
        try LogFileSurgery.flipBit(path, byteOffset: 40)
        try LogFileSurgery.flipBit(path, byteOffset: 512 + 40)
        let before = try LogFileSurgery.bytes(of: path)

        let readError = #expect(throws: LogFormatError.self) { _ = try LogReader(path: path) }
        #expect(readError?.code == .damaged)
        #expect(readError?.message.contains("both copies") == true)
        let writeError = #expect(throws: LogFormatError.self) { _ = try LogWriter(path: path) }
        #expect(writeError?.code == .damaged)
        #expect(try LogFileSurgery.bytes(of: path) == before)
    }

    @Test("a newer major version is refused with unsupportedVersion")
    func newerMajorVersion() throws {
        try TestLog.make(at: path, transactionCount: 2)
        try LogFileSurgery.editHeader(path) { $0.majorVersion = LogFileHeader.currentMajorVersion + 1 }

        let readError = #expect(throws: LogFormatError.self) { _ = try LogReader(path: path) }
        #expect(readError?.code == .unsupportedVersion)
        #expect(readError?.message.contains("version 2.0") == true)
        let writeError = #expect(throws: LogFormatError.self) { _ = try LogWriter(path: path) }
        #expect(writeError?.code == .unsupportedVersion)
    }

    @Test("an unknown incompatible feature flag is refused with unsupportedFeature")
    func unknownIncompatibleFeature() throws {
        try TestLog.make(at: path, transactionCount: 2)
        try LogFileSurgery.editHeader(path) { $0.incompatibleFeatures = 1 << 9 }

        let readError = #expect(throws: LogFormatError.self) { _ = try LogReader(path: path) }
        #expect(readError?.code == .unsupportedFeature)
        #expect(readError?.message.contains("0x200") == true)
        let writeError = #expect(throws: LogFormatError.self) { _ = try LogWriter(path: path) }
        #expect(writeError?.code == .unsupportedFeature)
    }

    @Test("an unknown compatible feature flag is ignored")
    func unknownCompatibleFeature() throws {
        try TestLog.make(at: path, transactionCount: 2)
        try LogFileSurgery.editHeader(path) { $0.compatibleFeatures = 1 << 9 }
        #expect(try Replay.read(path).transactions == TestLog.expected(1...2))
        #expect(try LogWriter(path: path).lastTransactionID == 2)
    }

    // MARK: - Frames in synced data

    @Test("a bad body checksum in synced data is damage at that frame")
    func badBodyChecksum() throws {
        let appended = try TestLog.make(at: path, transactionCount: 10)
        try LogFileSurgery.flipBit(path, byteOffset: appended[4].byteOffset + 48 + 17, bit: 6)
        try expectDamage(at: appended[4].byteOffset, affected: 5...5, reason: "body checksum")
    }

    @Test("a bad header checksum in synced data is damage at that frame")
    func badFrameHeaderChecksum() throws {
        let appended = try TestLog.make(at: path, transactionCount: 10)
        try LogFileSurgery.flipBit(path, byteOffset: appended[4].byteOffset + 9, bit: 0)
        try expectDamage(at: appended[4].byteOffset, affected: 5...5, reason: "header checksum")
    }

    @Test("damage in the last transaction is proven synced by the seal after it")
    func damageBeforeSeal() throws {
        let appended = try TestLog.make(at: path, transactionCount: 10)
        try LogFileSurgery.flipBit(path, byteOffset: appended[9].byteOffset + 60)
        let replay = try Replay.read(path)
        #expect(replay.report.tail.damage?.byteOffset == appended[9].byteOffset)
        #expect(replay.transactions == TestLog.expected(1...9))
        try TestLog.expectWriterRefuses(path, damageAt: appended[9].byteOffset)
    }

    @Test("a wrong sequence number (with valid checksums) is damage")
    func wrongSequence() throws {
        let appended = try TestLog.make(at: path, transactionCount: 10)
        let frame = try #require(try FrameMap.frames(in: path).first { $0.byteOffset == appended[4].byteOffset })
        var header = frame.header
        header.sequence += 7
        try FrameMap.rewriteHeader(path, at: frame.byteOffset, header)
        try expectDamage(at: frame.byteOffset, affected: 5...5, reason: "sequence number")
    }

    @Test("a frame copied from another log (another file UUID) is rejected")
    func frameFromAnotherFile() throws {
        let appended = try TestLog.make(at: path, transactionCount: 10)
        let other = directory.file("other.eglog")
        let otherAppended = try TestLog.make(at: other, transactionCount: 10)
        // The same transaction, byte for byte the same payload, at the same offset: only the seed differs.
        #expect(otherAppended[4] == appended[4])
        let otherBytes = try LogFileSurgery.bytes(of: other)
        let start = Int(otherAppended[4].byteOffset)
        try LogFileSurgery.overwrite(
            path, at: appended[4].byteOffset, with: Array(otherBytes[start..<Int(otherAppended[4].endByteOffset)]))
        try expectDamage(at: appended[4].byteOffset, affected: 5...5, reason: "header checksum")
    }

    @Test("a frame written again over its successor is damage")
    func duplicatedFrameInPlace() throws {
        let appended = try TestLog.make(at: path, transactionCount: 10)
        let bytes = try LogFileSurgery.bytes(of: path)
        let copy = Array(bytes[Int(appended[4].byteOffset)..<Int(appended[4].endByteOffset)])
        try LogFileSurgery.overwrite(path, at: appended[5].byteOffset, with: copy)
        try expectDamage(at: appended[5].byteOffset, affected: 6...6, reason: "sequence number")
    }

    @Test("a frame duplicated right after itself (shifting the rest) is damage, not a torn tail")
    func duplicatedFrameInserted() throws {
        let appended = try TestLog.make(at: path, transactionCount: 10)
        var bytes = try LogFileSurgery.bytes(of: path)
        let copy = Array(bytes[Int(appended[4].byteOffset)..<Int(appended[4].endByteOffset)])
        bytes.insert(contentsOf: copy, at: Int(appended[4].endByteOffset))
        try LogFileSurgery.write(bytes, to: path)
        // Transaction 6's watermark is exactly where the duplicate starts, so it alone does not prove the
        // duplicate's position synced; transaction 7's watermark (and the seal's) do.
        let replay = try Replay.read(path)
        let damage = try #require(replay.report.tail.damage)
        #expect(damage.byteOffset == appended[4].endByteOffset)
        #expect(damage.reason.contains("sequence number"))
        #expect(replay.transactions == TestLog.expected(1...5))
        try TestLog.expectWriterRefuses(path, damageAt: appended[4].endByteOffset)
    }

    @Test("a zeroed 4 KiB sector in synced data is damage at the first frame it touches")
    func zeroedSectorInSyncedData() throws {
        let appended = try TestLog.make(at: path, transactionCount: 80)
        try LogFileSurgery.overwrite(path, at: 4096, with: [UInt8](repeating: 0, count: 4096))
        let first = try #require(appended.firstIndex { $0.endByteOffset > 4096 })
        let next = try #require(appended.firstIndex { $0.byteOffset >= 8192 })
        let affected = appended[first].transactionID...appended[next - 1].transactionID
        try expectDamage(at: appended[first].byteOffset, affected: affected, reason: "checksum")
    }

    @Test("a zeroed 4 KiB sector in never-synced data is a torn tail, even with valid frames after it")
    func zeroedSectorInUnsyncedData() throws {
        let appended = try TestLog.make(at: path, transactionCount: 80, durability: .none, close: false)
        try LogFileSurgery.overwrite(path, at: 4096, with: [UInt8](repeating: 0, count: 4096))
        let first = try #require(appended.firstIndex { $0.endByteOffset > 4096 })
        let cut = appended[first].byteOffset

        let replay = try Replay.read(path)
        guard case .torn(let tail) = replay.report.tail else {
            Issue.record("expected a torn tail, got \(replay.report.tail)")
            return
        }
        #expect(tail.byteOffset == cut)
        #expect(replay.transactions == TestLog.expected(1...UInt64(first)))
        try TestLog.expectWriterTruncates(path, tornAt: cut)
        #expect(try Replay.read(path).report.tail == .clean)
    }

    @Test(
        "damage in a fragment of synced data is damage, though the fragments after it carry an older watermark",
        arguments: [0, 1, 2, 3])
    func damagedFragment(fragment: Int) throws {
        var options = LogWriter.Options()
        options.fragmentByteCount = 64
        do {
            let writer = try LogWriter(path: path, options: options)
            for id in 1...3 as ClosedRange<UInt64> {
                try writer.appendTransaction(id: id, payload: TestLog.payload(for: id, byteCount: id == 2 ? 256 : 40))
            }
        }
        // No seal: only transaction 3's watermark proves transaction 2's fragments synced.
        let frames = try FrameMap.frames(in: path).filter { $0.header.transactionID == 2 }
        #expect(frames.count == 4)
        try LogFileSurgery.flipBit(path, byteOffset: frames[fragment].bodyByteOffset + 5)

        let replay = try Replay.read(path)
        let damage = try #require(replay.report.tail.damage, "got \(replay.report.tail)")
        #expect(damage.byteOffset == frames[fragment].byteOffset)
        #expect(replay.transactions.map(\.id) == [1])
        try TestLog.expectWriterRefuses(path, damageAt: frames[fragment].byteOffset)
    }

    @Test("damage in the last frame of a log that was never closed is a torn tail (nothing proves it synced)")
    func damageInUnprovenLastFrame() throws {
        let appended = try TestLog.make(at: path, transactionCount: 10, close: false)
        try LogFileSurgery.flipBit(path, byteOffset: appended[9].byteOffset + 60)
        let replay = try Replay.read(path)
        #expect(replay.report.tail.isTorn)
        #expect(replay.report.tail.byteOffset == appended[9].byteOffset)
        #expect(replay.transactions == TestLog.expected(1...9))
        try TestLog.expectWriterTruncates(path, tornAt: appended[9].byteOffset)
    }

    // MARK: - Torn tails

    @Test("a truncated frame header at the end is a torn tail", arguments: [1, 20, 47])
    func truncatedFrameHeader(keptByteCount: UInt64) throws {
        let appended = try TestLog.make(at: path, transactionCount: 10, close: false)
        try LogFileSurgery.truncate(path, to: appended[9].byteOffset + keptByteCount)
        try expectTornTail(at: appended[9].byteOffset, reason: "truncated frame header", survivors: 1...9)
    }

    @Test("a truncated frame body at the end is a torn tail", arguments: [48, 49, 100, 151])
    func truncatedFrameBody(keptByteCount: UInt64) throws {
        let appended = try TestLog.make(at: path, transactionCount: 10, close: false)
        try LogFileSurgery.truncate(path, to: appended[9].byteOffset + keptByteCount)
        try expectTornTail(at: appended[9].byteOffset, reason: "truncated frame body", survivors: 1...9)
    }

    @Test("garbage after a sealed log is a torn tail, cut off by the next writer", arguments: [1, 7, 48, 1000])
    func garbageTail(byteCount: Int) throws {
        try TestLog.make(at: path, transactionCount: 10)
        let size = try LogFileSurgery.size(of: path)
        var generator = SeededGenerator(seed: UInt64(byteCount))
        try LogFileSurgery.append(path, TestBytes.random(byteCount, using: &generator))

        let replay = try Replay.read(path)
        #expect(replay.report.endsWithSeal)
        #expect(
            replay.report.tail
                == .torn(
                    TornTail(
                        byteOffset: size, byteCount: UInt64(byteCount),
                        reason: try #require(tornReason(replay.report.tail)))))
        try TestLog.expectWriterTruncates(path, tornAt: size)
        let writer = try LogWriter(path: path)
        #expect(writer.recoveryReport.truncatedTail == nil)
        try writer.appendTransaction(id: 11, payload: TestLog.payload(for: 11))
        try writer.close()
        #expect(try Replay.read(path).transactions == TestLog.expected(1...11))
    }

    // MARK: - Grammar

    @Test("fragments out of order (valid checksums and sequence numbers) are damage")
    func fragmentsOutOfOrder() throws {
        let writer = try LogWriter(
            path: path,
            options: {
                var options = LogWriter.Options()
                options.fragmentByteCount = 64
                return options
            }())
        for id in 1...3 as ClosedRange<UInt64> {
            try writer.appendTransaction(id: id, payload: TestLog.payload(for: id))
        }
        let fragmented = try writer.appendTransaction(id: 4, payload: TestLog.payload(for: 4, byteCount: 256))
        for id in 5...8 as ClosedRange<UInt64> {
            try writer.appendTransaction(id: id, payload: TestLog.payload(for: id))
        }
        try writer.close()

        // Swap the two middle fragments, keeping each slot's sequence number.
        let frames = try FrameMap.frames(in: path).filter { $0.header.transactionID == 4 }
        #expect(
            frames.map(\.header.type) == [.transactionFirst, .transactionMiddle, .transactionMiddle, .transactionLast])
        let bytes = try LogFileSurgery.bytes(of: path)
        let (a, b) = (frames[1], frames[2])
        var headerForA = b.header
        var headerForB = a.header
        (headerForA.sequence, headerForB.sequence) = (a.header.sequence, b.header.sequence)
        try LogFileSurgery.overwrite(
            path, at: a.bodyByteOffset, with: Array(bytes[Int(b.bodyByteOffset)..<Int(b.endByteOffset)]))
        try LogFileSurgery.overwrite(
            path, at: b.bodyByteOffset, with: Array(bytes[Int(a.bodyByteOffset)..<Int(a.endByteOffset)]))
        try FrameMap.rewriteHeader(path, at: a.byteOffset, headerForA)
        try FrameMap.rewriteHeader(path, at: b.byteOffset, headerForB)

        let replay = try Replay.read(path)
        let damage = try #require(replay.report.tail.damage, "got \(replay.report.tail)")
        #expect(damage.byteOffset == a.byteOffset)
        #expect(damage.reason.contains("out of order"))
        #expect(damage.lastGoodTransactionID == 3)
        #expect(replay.transactions == TestLog.expected(1...3))
        #expect(fragmented.byteOffset == frames[0].byteOffset)
        let refused = try TestLog.expectWriterRefuses(path, damageAt: a.byteOffset)
        #expect(refused?.summary.contains("after 3") == true || refused?.affectedTransactionIDs == 4...4)
    }

    // MARK: - Checks shared by the tests above

    /// The scan stops at `byteOffset` with damage naming `affected`, and the writer refuses without truncating.
    private func expectDamage(
        at byteOffset: UInt64, affected: ClosedRange<UInt64>, reason: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let replay = try Replay.read(path)
        let damage = try #require(
            replay.report.tail.damage, "got \(replay.report.tail)", sourceLocation: sourceLocation)
        #expect(damage.byteOffset == byteOffset, sourceLocation: sourceLocation)
        #expect(damage.reason.contains(reason), "reason: \(damage.reason)", sourceLocation: sourceLocation)
        #expect(damage.affectedTransactionIDs == affected, sourceLocation: sourceLocation)
        #expect(replay.transactions == TestLog.expected(1...(affected.lowerBound - 1)), sourceLocation: sourceLocation)
        #expect(replay.report.lastTransactionID == affected.lowerBound - 1, sourceLocation: sourceLocation)

        let refused = try TestLog.expectWriterRefuses(path, damageAt: byteOffset, sourceLocation: sourceLocation)
        #expect(refused?.affectedTransactionIDs == affected, sourceLocation: sourceLocation)
    }

    /// The scan ends in a torn tail at `byteOffset`, and the writer cuts it off and reports it.
    private func expectTornTail(
        at byteOffset: UInt64, reason: String, survivors: ClosedRange<UInt64>,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let replay = try Replay.read(path)
        guard case .torn(let tail) = replay.report.tail else {
            Issue.record("expected a torn tail, got \(replay.report.tail)", sourceLocation: sourceLocation)
            return
        }
        #expect(tail.byteOffset == byteOffset, sourceLocation: sourceLocation)
        #expect(tail.reason.contains(reason), "reason: \(tail.reason)", sourceLocation: sourceLocation)
        #expect(replay.transactions == TestLog.expected(survivors), sourceLocation: sourceLocation)
        try TestLog.expectWriterTruncates(path, tornAt: byteOffset, sourceLocation: sourceLocation)
        let reopened = try LogWriter(path: path)
        #expect(reopened.lastTransactionID == survivors.upperBound, sourceLocation: sourceLocation)
    }

    private func tornReason(_ tail: LogTail) -> String? {
        if case .torn(let torn) = tail { torn.reason } else { nil }
    }
}
