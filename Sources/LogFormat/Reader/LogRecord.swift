/// A committed unit of the log, as ``LogReader`` delivers it.
package enum LogRecord: Sendable {
    /// The model in force from here on.
    case schema(SchemaPayload, byteOffset: UInt64)
    /// A committed transaction.
    case transaction(TransactionRecord)
    /// The start of a checkpoint; the state it describes replaces everything before it.
    case checkpointBegin(CheckpointBegin, byteOffset: UInt64)
    /// A batch of live objects of the current checkpoint.
    case checkpointChunk(CheckpointChunk, byteOffset: UInt64)
    /// An externally stored binary value that belongs to the current checkpoint.
    case checkpointBlob(BlobLocation)
    /// Where the current checkpoint's entity chunks are (format 1.3), just before its end. A scan that does not
    /// defer entity chunks has delivered them as ``checkpointChunk(_:byteOffset:)`` records already; one that
    /// defers has not, and the reader loads them with ``LogReader/readEntityChunk(_:checkpointTransactionID:)``.
    case checkpointDirectory(CheckpointDirectory, byteOffset: UInt64)
    /// The end of the checkpoint.
    case checkpointEnd(CheckpointEnd, byteOffset: UInt64)
    /// An LZ4 dictionary used by later frames (handled by the reader; reported for tools).
    case dictionary(byteCount: Int, byteOffset: UInt64)
    /// A clean close.
    case seal(byteOffset: UInt64)
    /// A skippable extension frame this version does not interpret.
    case extensionFrame(type: FrameType, payload: [UInt8], byteOffset: UInt64)
}

/// A committed transaction: its ID, its (undecoded) changeset payload and its blobs.
///
/// A transaction that spans several fragment frames is not held in memory: ``changeset()`` reads its fragments
/// from the file one at a time as it decodes, so a reader's memory does not grow with the transaction's size.
public struct TransactionRecord: Sendable {
    /// The transaction ID (from the frames).
    public var transactionID: UInt64
    /// The encoded ``Changeset``, in memory or in the file.
    let body: SpannedPayload
    /// The transaction's externally stored binary values, in index order.
    package var blobs: [BlobLocation]
    /// Byte offset of the transaction's first frame.
    public var byteOffset: UInt64

    /// Creates a record of a payload in memory.
    package init(transactionID: UInt64, payload: [UInt8], blobs: [BlobLocation], byteOffset: UInt64) {
        self.init(transactionID: transactionID, body: .whole(payload), blobs: blobs, byteOffset: byteOffset)
    }

    init(transactionID: UInt64, body: SpannedPayload, blobs: [BlobLocation], byteOffset: UInt64) {
        self.transactionID = transactionID
        self.body = body
        self.blobs = blobs
        self.byteOffset = byteOffset
    }

    /// The length of the encoded changeset.
    public var payloadByteCount: Int { body.byteCount }

    /// The bytes the record holds in memory: a whole frame's payload, as stored when the scan left it compressed
    /// (whose ``payloadByteCount`` is only what its frame header claims until it is decompressed); none for a payload
    /// left in the file in fragments. What a caller that keeps records waiting counts against its bound.
    package var heldByteCount: Int {
        switch body {
        case .whole(let bytes): bytes.count
        case .compressed(let stored): stored.body.count
        case .fragmented: 0
        }
    }

    /// The encoded ``Changeset`` in one array. For a fragmented transaction this reads every fragment again and
    /// holds the whole payload; decode with ``changeset()`` instead, which does not.
    ///
    /// - Throws: ``LogFormatError/Code/damaged`` when a fragment no longer verifies, or an I/O error.
    public var payload: [UInt8] {
        get throws(LogFormatError) { try body.bytes() }
    }

    /// Decodes the changeset, checking that its transaction ID matches the frames'.
    public func changeset() throws(LogFormatError) -> Changeset {
        var collector = ChangesetCollector()
        try visitChangeset(&collector)
        return collector.changeset
    }

    /// Decodes the changeset into `visitor` (see ``ChangesetVisitor``), with the checks of ``changeset()``: the
    /// payload's, then that its transaction ID matches the frames'. Returns its header.
    @discardableResult
    package func visitChangeset(_ visitor: inout some ChangesetVisitor) throws(LogFormatError) -> ChangesetHeader {
        let header: ChangesetHeader
        do {
            header = try Changeset.visit(body, &visitor)
        } catch  where error.code != .damaged && error.code != .io {
            // A fragment that fails when read again (damaged, io) keeps its own error and byte offset.
            throw LogFormatError(
                .malformedPayload, "transaction \(transactionID): \(error.message)", byteOffset: byteOffset)
        }
        guard header.transactionID == transactionID else {
            throw LogFormatError(
                .malformedPayload,
                "transaction \(transactionID) carries a changeset for transaction \(header.transactionID)",
                byteOffset: byteOffset)
        }
        return header
    }
}

/// What follows the committed part of a log.
public enum LogTail: Hashable, Sendable {
    /// The file ends exactly after its last committed frame.
    case clean
    /// Bytes after the last committed frame that were never synced (a crash during a write): not data, and
    /// dropped by the next writer.
    case torn(TornTail)
    /// Data that had already been made durable fails its checks.
    case damaged(DamageReport)
}

/// The bytes of a torn (never-synced) tail.
public struct TornTail: Hashable, Sendable {
    /// Where the tail starts (the end of the last committed frame).
    public var byteOffset: UInt64
    /// How many bytes it has.
    public var byteCount: UInt64
    /// Why its first frame was not accepted.
    public var reason: String
    /// The transactions it held parts of whose frame headers still verify (none were committed), in order.
    public var transactionIDs: [UInt64]
    /// Whether every byte of it is zero: preallocated space a writer keeps ahead of its last frame (it is running,
    /// or crashed), which holds no data (`Docs/FileFormat.md` §4). A writer's open cuts it off and reports it as
    /// ``RecoveryReport/trimmedPreallocationByteCount``; a read-only reader should not call it a torn tail.
    public var isPreallocatedSpace = false

    /// Creates a description of a torn tail.
    public init(byteOffset: UInt64, byteCount: UInt64, reason: String, transactionIDs: [UInt64] = []) {
        self.byteOffset = byteOffset
        self.byteCount = byteCount
        self.reason = reason
        self.transactionIDs = transactionIDs
    }
}

/// A summary of one pass over a log.
public struct ScanReport: Hashable, Sendable {
    /// Bytes in the file when the scan began.
    public var fileByteCount: UInt64
    /// Bytes up to the end of the last committed frame.
    public var committedByteCount: UInt64
    /// Frames that verified.
    public var frameCount: Int
    /// Committed transactions.
    public var transactionCount: Int
    /// The last committed transaction (0 when none).
    public var lastTransactionID: UInt64
    /// Payload bytes after decompression, and stored body bytes, of every verified frame.
    public var rawPayloadByteCount: UInt64
    /// Stored (possibly compressed) body bytes of every verified frame.
    public var storedBodyByteCount: UInt64
    /// Whether the committed part ends with a seal (the last writer closed cleanly).
    public var endsWithSeal: Bool
    /// Whether one of the two header copies failed its checks (the other was used).
    public var headerCopyDamaged: Bool
    /// What follows the committed part: nothing, a torn tail, or damage.
    public var tail: LogTail
}
