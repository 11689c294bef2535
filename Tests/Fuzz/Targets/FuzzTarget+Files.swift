import EventGraph
import Foundation
import LogFormat

extension FuzzTarget {
    /// The first byte of a file input says which checksums the harness recomputes before the file is read, so that
    /// mutations reach the decoders behind the checksums (bit 0: both header copies; bit 1: every frame). With the
    /// bit clear, the checksums are the input's own and the checks themselves are fuzzed.
    struct ChecksumRepair: OptionSet {
        var rawValue: UInt8
        static let header = ChecksumRepair(rawValue: 1)
        static let frames = ChecksumRepair(rawValue: 2)
    }

    static func runHeader(_ input: UnsafeRawBufferPointer) {
        guard let (repair, file) = splitControlByte(input) else { return }
        withFile(repairing(file, repair)) { path in
            _ = try? LogReader(path: path).scan()
        }
    }

    /// Frames after a fixed valid header: every frame scanned and decoded, and the first one read on its own.
    static func runFrames(_ input: UnsafeRawBufferPointer) {
        guard let (repair, frames) = splitControlByte(input) else { return }
        let header = LogFileHeader(
            storeUUID: LogUUID(high: 1, low: 2), fileUUID: LogUUID(high: 3, low: 4), createdMicroseconds: 0)
        withFile(repairing(header.encodedRegion() + frames, repair.subtracting(.header))) { path in
            guard let reader = try? LogReader(path: path) else { return }
            _ = try? reader.scan { try decode($0) }
            _ = try? reader.readBlob(at: LogFileHeader.framesByteOffset)
        }
    }

    /// A whole file opened read-only, by the reader and by the object layer.
    static func runOpen(_ input: UnsafeRawBufferPointer) {
        guard let (repair, file) = splitControlByte(input) else { return }
        withFile(repairing(file, repair)) { path in
            guard let report = try? LogReader(path: path).scan({ try decode($0) }) else { return }
            guard let view = try? ModelContainer.view(path: path, asOfTransaction: report.lastTransactionID) else {
                return
            }
            _ = try? view.stateDigest()
        }
    }

    /// Decodes what a record holds that the scan leaves encoded (the changeset), as every reader does.
    private static func decode(_ record: LogRecord) throws {
        if case .transaction(let transaction) = record { _ = try transaction.changeset() }
    }

    private static func splitControlByte(_ input: UnsafeRawBufferPointer) -> (ChecksumRepair, [UInt8])? {
        guard let control = input.first else { return nil }
        return (ChecksumRepair(rawValue: control), Array(input.dropFirst()))
    }

    /// The bytes of a log file with the chosen checksums recomputed, following `Docs/FileFormat.md`: a header copy
    /// ends with the CRC32C of its first 124 bytes; a frame header holds the CRC32C of the body at byte 36 and of its
    /// own first 44 bytes at byte 44, both seeded with the CRC32C of the file UUID (bytes 48..<64 of the header).
    static func repairing(_ file: [UInt8], _ repair: ChecksumRepair) -> [UInt8] {
        var bytes = file
        let copyByteCount = LogFileHeader.copyByteCount
        if repair.contains(.header) {
            for start in [0, LogFileHeader.secondCopyByteOffset] where bytes.count >= start + copyByteCount {
                let crc = CRC32C.checksum(Array(bytes[start..<start + copyByteCount - 4]))
                store(crc, into: &bytes, at: start + copyByteCount - 4)
            }
        }
        guard repair.contains(.frames), bytes.count >= copyByteCount else { return bytes }
        let seed = CRC32C.checksum(Array(bytes[48..<64]))
        var offset = Int(LogFileHeader.framesByteOffset)
        while offset + FrameHeader.byteCount <= bytes.count {
            let bodyStart = offset + FrameHeader.byteCount
            let bodyByteCount = Int(load(bytes, at: offset))
            let bodyEnd = min(bytes.count, bodyStart + bodyByteCount)
            store(CRC32C.checksum(Array(bytes[bodyStart..<bodyEnd]), continuing: seed), into: &bytes, at: offset + 36)
            store(CRC32C.checksum(Array(bytes[offset..<offset + 44]), continuing: seed), into: &bytes, at: offset + 44)
            offset =
                bodyStart + (bodyByteCount + FrameHeader.alignment - 1) / FrameHeader.alignment
                * FrameHeader.alignment
        }
        return bytes
    }

    private static func load(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    private static func store(_ value: UInt32, into bytes: inout [UInt8], at offset: Int) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
    }

    /// Writes `bytes` to this process's scratch file (in memory when `/dev/shm` exists) and runs `body` on it.
    private static func withFile(_ bytes: [UInt8], _ body: (String) -> Void) {
        let path = scratchPath
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            preconditionFailure("cannot write the fuzz scratch file \(path)")
        }
        body(path)
    }

    private static let scratchPath: String = {
        let directory = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        return "\(directory)/eventgraph-fuzz-\(ProcessInfo.processInfo.processIdentifier).eglog"
    }()
}
