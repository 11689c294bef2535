/// When an append is acknowledged relative to `fdatasync`.
public enum Durability: Hashable, Sendable, CustomStringConvertible {
    /// Acknowledge after `fdatasync` covers the frames (the default). Concurrent appends share one sync.
    case full
    /// Acknowledge after the write reaches the OS; sync at most every ``LogWriter/Options/normalSyncInterval``
    /// milliseconds or ``LogWriter/Options/normalSyncByteCount`` bytes. A process crash loses nothing; power loss
    /// may lose the last moments, and the log stays consistent (recovery drops the unsynced tail).
    case normal
    /// Never sync (tests and scratch data). A power loss may lose anything since the last clean close.
    case none

    public var description: String {
        switch self {
        case .full: "full"
        case .normal: "normal"
        case .none: "none"
        }
    }
}

/// What an appended transaction occupies in the file.
public struct AppendedTransaction: Hashable, Sendable {
    /// The transaction appended.
    public var transactionID: UInt64
    /// Byte offset of the transaction's first frame.
    public var byteOffset: UInt64
    /// Byte offset just after its last frame.
    public var endByteOffset: UInt64
    /// Where each of its blobs landed, in index order (for lazy reads through ``LogWriter/readBlob(at:)``).
    package var blobs: [BlobLocation]
    /// The writer's file the offsets are in: a rewrite (compaction) replaces the file and starts the next one.
    package var fileGeneration: UInt64 = 0
}

/// What opening a log for writing found and repaired.
public struct RecoveryReport: Hashable, Sendable {
    /// The torn tail that was truncated, if there was one.
    public var truncatedTail: TornTail?
    /// Whether one header copy was damaged (the other was used; the file still opens).
    public var headerCopyDamaged: Bool
    /// Leftover temporary files from an interrupted rewrite or creation that were removed.
    public var removedLeftovers: [String]
    /// Whether the file was created by this open.
    public var created: Bool
    /// The scan of the committed part.
    public var scan: ScanReport
    /// Bytes of zeros after the last committed unit that opening cut off: space a writer had preallocated ahead of
    /// the log's end and could not cut off itself (it did not close). Not a torn tail, and not reported as one.
    public var trimmedPreallocationByteCount: UInt64 = 0
}
