import Foundation

@testable import LogFormat

/// Byte-level edits of log files, the way a failing disk or a crash would make them.
enum LogFileSurgery {
    static func bytes(of path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func size(of path: String) throws -> UInt64 {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.size] as? NSNumber)?.uint64Value ?? 0
    }

    /// Overwrites bytes in place, without changing the file's size unless they extend past its end.
    static func overwrite(_ path: String, at byteOffset: UInt64, with bytes: [UInt8]) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: byteOffset)
        try handle.write(contentsOf: Data(bytes))
    }

    static func flipBit(_ path: String, byteOffset: UInt64, bit: Int = 0) throws {
        var bytes = try self.bytes(of: path)
        bytes[Int(byteOffset)] ^= UInt8(1) << UInt8(bit)
        try overwrite(path, at: byteOffset, with: [bytes[Int(byteOffset)]])
    }

    static func truncate(_ path: String, to byteCount: UInt64) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.truncate(atOffset: byteCount)
    }

    static func append(_ path: String, _ bytes: [UInt8]) throws {
        try overwrite(path, at: try size(of: path), with: bytes)
    }

    /// Rewrites both header copies (byte 0 and 512) with `change` applied, checksums recomputed.
    static func editHeader(_ path: String, _ change: (inout LogFileHeader) -> Void) throws {
        var header = try LogReader(path: path).header
        change(&header)
        let copy = header.encodedCopy()
        try overwrite(path, at: 0, with: copy)
        try overwrite(path, at: UInt64(LogFileHeader.secondCopyByteOffset), with: copy)
    }
}

extension LogFileSurgery {
    /// Writes `bytes` at `fieldOffset` of the header copies `copies` (0: the first, 1: the second) and recomputes
    /// each one's checksum, the way a crafted file would: any value, in any field, verifying.
    static func forgeHeaderField(_ path: String, at fieldOffset: Int, _ bytes: [UInt8], copies: [Int] = [0, 1]) throws {
        var region = try Array(self.bytes(of: path).prefix(Int(LogFileHeader.framesByteOffset)))
        for copy in copies {
            let start = copy * LogFileHeader.secondCopyByteOffset
            region.replaceSubrange((start + fieldOffset)..<(start + fieldOffset + bytes.count), with: bytes)
            let crc = CRC32C.checksum(Array(region[start..<(start + 124)]))
            region.replaceSubrange(
                (start + 124)..<(start + 128), with: withUnsafeBytes(of: crc.littleEndian, Array.init))
        }
        try overwrite(path, at: 0, with: region)
    }

    /// The little-endian bytes of an integer, for ``forgeHeaderField(_:at:_:copies:)``.
    static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian, Array.init)
    }
}

/// One frame of a log file as laid out on disk.
struct FrameLayout: Hashable {
    var byteOffset: UInt64
    var header: FrameHeader
    var endByteOffset: UInt64 { byteOffset + header.frameByteCount }
    /// The body's bytes (stored form) start here.
    var bodyByteOffset: UInt64 { byteOffset + UInt64(FrameHeader.byteCount) }
}

/// The frames of a log file, decoded header by header (no grammar), for tests that need to aim at one frame.
enum FrameMap {
    static func frames(in path: String) throws -> [FrameLayout] {
        let bytes = try LogFileSurgery.bytes(of: path)
        let seed = try LogReader(path: path).header.checksumSeed
        var frames: [FrameLayout] = []
        var offset = Int(LogFileHeader.framesByteOffset)
        while offset + FrameHeader.byteCount <= bytes.count {
            let decoded = bytes.withUnsafeBytes { raw in
                FrameHeader.decode(
                    UnsafeRawBufferPointer(rebasing: raw[offset..<offset + FrameHeader.byteCount]), seed: seed)
            }
            guard case .success(let header) = decoded, offset + Int(header.frameByteCount) <= bytes.count else { break }
            frames.append(FrameLayout(byteOffset: UInt64(offset), header: header))
            offset += Int(header.frameByteCount)
        }
        return frames
    }

    /// Writes `header` (checksum recomputed with the file's seed) over the frame header at `byteOffset`.
    static func rewriteHeader(_ path: String, at byteOffset: UInt64, _ header: FrameHeader) throws {
        let seed = try LogReader(path: path).header.checksumSeed
        var bytes = [UInt8](repeating: 0, count: FrameHeader.byteCount)
        bytes.withUnsafeMutableBytes { header.encode(into: $0, seed: seed) }
        try LogFileSurgery.overwrite(path, at: byteOffset, with: bytes)
    }
}

/// A transaction as a replay delivers it.
struct ReplayedTransaction: Hashable, CustomStringConvertible {
    var id: UInt64
    var payload: [UInt8]
    var description: String { "#\(id) (\(payload.count) bytes)" }
}

/// What a read-only scan of a log delivers.
struct Replay {
    var transactions: [ReplayedTransaction] = []
    var records: [LogRecord] = []
    var report: ScanReport

    /// Scans `path` read-only.
    static func read(_ path: String) throws -> Replay {
        var transactions: [ReplayedTransaction] = []
        var records: [LogRecord] = []
        let report = try LogReader(path: path).scan { record in
            records.append(record)
            if case .transaction(let transaction) = record {
                transactions.append(
                    ReplayedTransaction(id: transaction.transactionID, payload: try transaction.payload))
            }
        }
        return Replay(transactions: transactions, records: records, report: report)
    }
}

extension LogTail {
    /// The byte offset a torn tail starts at or damage was found at; nil when clean.
    var byteOffset: UInt64? {
        switch self {
        case .clean: nil
        case .torn(let tail): tail.byteOffset
        case .damaged(let damage): damage.byteOffset
        }
    }

    var isTorn: Bool { if case .torn = self { true } else { false } }
    var damage: DamageReport? { if case .damaged(let damage) = self { damage } else { nil } }
}
