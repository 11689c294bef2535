/// The type byte of a frame.
///
/// Types with the high bit set (0x80–0xFF) are *skippable extensions*: a reader that does not know one skips it.
/// An unknown type below 0x80 is an error, because ignoring it could change the meaning of the log.
package struct FrameType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    package var rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    /// A whole transaction (its changeset) in one frame; it commits the transaction.
    package static let transaction = FrameType(rawValue: 0x01)
    /// The first fragment of a transaction larger than ``LogLimits/maxFrameRawByteCount``.
    package static let transactionFirst = FrameType(rawValue: 0x02)
    /// A middle fragment.
    package static let transactionMiddle = FrameType(rawValue: 0x03)
    /// The last fragment; it commits the transaction.
    package static let transactionLast = FrameType(rawValue: 0x04)
    /// The bytes of one externally stored binary value, part of the transaction that follows it.
    package static let blob = FrameType(rawValue: 0x05)
    /// The model (``SchemaPayload``); committed on its own.
    package static let schema = FrameType(rawValue: 0x10)
    /// Starts a checkpoint (``CheckpointBegin``).
    package static let checkpointBegin = FrameType(rawValue: 0x20)
    /// A batch of live objects (``CheckpointChunk``).
    package static let checkpointChunk = FrameType(rawValue: 0x21)
    /// Ends a checkpoint (``CheckpointEnd``); it commits the checkpoint.
    package static let checkpointEnd = FrameType(rawValue: 0x22)
    /// The first fragment of a checkpoint chunk larger than one frame (format 1.2).
    package static let checkpointChunkFirst = FrameType(rawValue: 0x23)
    /// A middle fragment of a checkpoint chunk.
    package static let checkpointChunkMiddle = FrameType(rawValue: 0x24)
    /// The last fragment of a checkpoint chunk; the fragments concatenated form the chunk's payload.
    package static let checkpointChunkLast = FrameType(rawValue: 0x25)
    /// A chunk of one entity's live objects, listed in the checkpoint's directory and read on first touch (format
    /// 1.3); the payload is a ``CheckpointChunk``.
    package static let checkpointEntityChunk = FrameType(rawValue: 0x26)
    /// Where the checkpoint's entity chunks are (``CheckpointDirectory``); the last frame before the checkpoint-end.
    package static let checkpointDirectory = FrameType(rawValue: 0x27)
    /// A sorted run of one index's entries (format 1.4), listed in the checkpoint's directory and read on first use;
    /// the payload is a ``CheckpointIndexChunk``.
    package static let checkpointIndexChunk = FrameType(rawValue: 0x28)
    /// An LZ4 dictionary for the frames after it that use ``FrameCodec/lz4Dictionary``.
    package static let dictionary = FrameType(rawValue: 0x30)
    /// Clean close: everything before it was synced.
    package static let seal = FrameType(rawValue: 0x40)

    /// Whether an older reader may skip a frame of this type.
    package var isSkippable: Bool { rawValue & 0x80 != 0 }

    /// Whether this reader knows the type.
    package var isKnown: Bool {
        switch self {
        case .transaction, .transactionFirst, .transactionMiddle, .transactionLast, .blob, .schema, .checkpointBegin,
            .checkpointChunk, .checkpointEnd, .checkpointChunkFirst, .checkpointChunkMiddle, .checkpointChunkLast,
            .checkpointEntityChunk, .checkpointDirectory, .checkpointIndexChunk, .dictionary, .seal:
            true
        default: false
        }
    }

    /// Whether the frame is a fragment of a payload that spans several frames (a transaction's or a checkpoint
    /// chunk's); a reader reads such frames again when it decodes the payload, rather than holding them.
    var isFragment: Bool {
        self == .transactionFirst || self == .transactionMiddle || self == .transactionLast
            || self == .checkpointChunkFirst || self == .checkpointChunkMiddle || self == .checkpointChunkLast
    }

    /// Whether the frame holds (a part of) a transaction's changeset: a whole one or a fragment.
    var isTransactionPayload: Bool {
        self == .transaction || self == .transactionFirst || self == .transactionMiddle || self == .transactionLast
    }

    /// Whether the frame belongs to a transaction (and carries its transaction ID in the frame header).
    package var isTransactionPart: Bool {
        self == .transaction || self == .transactionFirst || self == .transactionMiddle || self == .transactionLast
            || self == .blob
    }

    package var description: String {
        switch self {
        case .transaction: "transaction"
        case .transactionFirst: "transaction-first"
        case .transactionMiddle: "transaction-middle"
        case .transactionLast: "transaction-last"
        case .blob: "blob"
        case .schema: "schema"
        case .checkpointBegin: "checkpoint-begin"
        case .checkpointChunk: "checkpoint-chunk"
        case .checkpointEnd: "checkpoint-end"
        case .checkpointChunkFirst: "checkpoint-chunk-first"
        case .checkpointChunkMiddle: "checkpoint-chunk-middle"
        case .checkpointChunkLast: "checkpoint-chunk-last"
        case .checkpointEntityChunk: "checkpoint-entity-chunk"
        case .checkpointDirectory: "checkpoint-directory"
        case .checkpointIndexChunk: "checkpoint-index-chunk"
        case .dictionary: "dictionary"
        case .seal: "seal"
        default: isSkippable ? "extension-0x\(String(rawValue, radix: 16))" : "unknown-0x\(String(rawValue, radix: 16))"
        }
    }
}

/// How a frame's body is stored.
package enum FrameCodec: UInt8, Hashable, Sendable {
    /// The body is the payload itself.
    case raw = 0
    /// The body is one LZ4 block; it decompresses to exactly the frame's raw length.
    case lz4 = 1
    /// One LZ4 block compressed against the most recent ``FrameType/dictionary`` frame.
    case lz4Dictionary = 2
}
