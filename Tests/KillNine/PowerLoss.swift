import Foundation
import LogFormat
import TestSupport

/// What a power loss does to the bytes past the last synced offset: they were in the page cache only.
enum PowerLoss: String, CaseIterable, Sendable {
    /// The file ends where the last sync reached.
    case truncate
    /// The unsynced pages were allocated but never written.
    case zeroFill
    /// The unsynced pages hold whatever the disk had there.
    case garbage

    /// The offset below which every byte is known to be synced: the largest durable watermark any frame carries,
    /// the end of every frame of an acknowledged transaction (acknowledged under `.full` means synced), and the end
    /// of the last checkpoint (a rewrite is synced before it replaces the log).
    ///
    /// Any cut at or after it is a state a real power loss could leave: no surviving frame claims that a lost one had
    /// been synced, and no acknowledged save is lost.
    static func syncedByteCount(of path: String, acknowledgedThrough transactionID: UInt64) throws -> UInt64 {
        let reader = try LogReader(path: path)
        let report = try reader.scan()
        var synced = LogFileHeader.framesByteOffset
        var offset = LogFileHeader.framesByteOffset
        while offset < report.committedByteCount {
            let (header, _) = try reader.readFrame(at: offset)
            let end = offset + header.frameByteCount
            synced = max(synced, header.durableWatermark)
            let isAcknowledged = header.transactionID != 0 && header.transactionID <= transactionID
            if isAcknowledged || header.type == .checkpointEnd { synced = max(synced, end) }
            offset = end
        }
        return min(synced, report.committedByteCount)
    }

    /// Loses everything past a random cut at or after the synced offset, the way this mode does; returns a
    /// description for the log.
    func apply(to path: String, acknowledgedThrough transactionID: UInt64, using random: inout SeededGenerator)
        throws -> String
    {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let fileByteCount = try handle.seekToEnd()
        let synced = try Self.syncedByteCount(of: path, acknowledgedThrough: transactionID)
        let cut = UInt64.random(in: synced...max(synced, fileByteCount), using: &random)
        let lost = fileByteCount - cut
        switch self {
        case .truncate:
            try handle.truncate(atOffset: cut)
        case .zeroFill, .garbage:
            try handle.seek(toOffset: cut)
            let bytes: [UInt8] =
                self == .zeroFill
                ? [UInt8](repeating: 0, count: Int(lost))
                : (0..<lost).map { _ in UInt8.random(in: 0...255, using: &random) }
            try handle.write(contentsOf: Data(bytes))
        }
        return "\(rawValue) past byte \(cut) (synced through \(synced), \(lost) of \(fileByteCount) bytes lost)"
    }
}
