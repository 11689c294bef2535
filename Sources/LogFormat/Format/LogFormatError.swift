/// An error raised by LogFormat: I/O, corruption, version or feature mismatch, a limit exceeded, a locked store.
///
/// The ``code`` says what kind of failure it is (new codes can be added without breaking callers, because
/// ``Code`` wraps a private enum); the ``message`` is a sentence naming the values involved.
public struct LogFormatError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case io, notALog, unsupportedVersion, unsupportedFeature, damaged, limitExceeded, malformedPayload,
                locked, poisoned, closed, invalidArgument, verificationFailed
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A system call failed (see ``LogFormatError/systemErrno``).
        public static let io = Code(.io)
        /// The file is not an EventGraph log (bad magic or unreadable header).
        public static let notALog = Code(.notALog)
        /// The file was written by a newer major format version.
        public static let unsupportedVersion = Code(.unsupportedVersion)
        /// The file uses an incompatible feature this reader does not know.
        public static let unsupportedFeature = Code(.unsupportedFeature)
        /// Data that had already been made durable is damaged (see ``LogFormatError/damage``).
        public static let damaged = Code(.damaged)
        /// A size exceeds one of the named limits in `LogLimits` (the format's bounds; `Docs/FileFormat.md`).
        public static let limitExceeded = Code(.limitExceeded)
        /// A payload (changeset, schema, checkpoint) does not decode.
        public static let malformedPayload = Code(.malformedPayload)
        /// Another process holds the writer lock.
        public static let locked = Code(.locked)
        /// An earlier write or sync failed; the writer accepts nothing more and must be reopened.
        public static let poisoned = Code(.poisoned)
        /// The writer or reader was closed.
        public static let closed = Code(.closed)
        /// A caller passed a value outside the documented range.
        public static let invalidArgument = Code(.invalidArgument)
        /// A rewritten file did not verify; the original file was left in place.
        public static let verificationFailed = Code(.verificationFailed)

        public var description: String { base.rawValue }
    }

    /// The kind of failure.
    public var code: Code
    /// A sentence naming what went wrong and the values involved.
    public var message: String
    /// The file involved, when there is one.
    public var path: String?
    /// The byte offset in the file (or in a payload) where the problem was found, when known.
    public var byteOffset: UInt64?
    /// The `errno` of a failed system call.
    public var systemErrno: Int32?
    /// Details of damage found in durable data.
    public var damage: DamageReport?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, path: String? = nil, byteOffset: UInt64? = nil,
        systemErrno: Int32? = nil, damage: DamageReport? = nil
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.byteOffset = byteOffset
        self.systemErrno = systemErrno
        self.damage = damage
    }

    public var description: String {
        var text = ""
        if let path { text += "\(path): " }
        text += message
        if let byteOffset, !message.contains("offset") { text += " (at byte offset \(byteOffset))" }
        return text
    }
}

/// A description of damage to data that had already been made durable.
public struct DamageReport: Hashable, Sendable {
    /// Byte offset of the first frame that failed its checks.
    public var byteOffset: UInt64
    /// Why the frame failed (for example "body checksum mismatch").
    public var reason: String
    /// The last transaction that verifies before the damage, if any.
    public var lastGoodTransactionID: UInt64?
    /// The first transaction that verifies after the damage, if any.
    public var nextGoodTransactionID: UInt64?
    /// Byte offset of the next frame that verifies after the damage, if any.
    public var nextGoodByteOffset: UInt64?

    /// The transactions whose frames lie in the damaged region, as a closed range when it can be bounded.
    ///
    /// Transaction IDs are contiguous, so the affected ones are those strictly between the last good and the
    /// next good transaction; when nothing verifies after the damage the range is open-ended (`nil`).
    public var affectedTransactionIDs: ClosedRange<UInt64>? {
        // Both IDs come from the file; compare before adding, since the last good one may be the largest ID.
        let last = lastGoodTransactionID ?? 0
        guard let next = nextGoodTransactionID, next > last, next - last > 1 else { return nil }
        return (last + 1)...(next - 1)
    }

    /// Creates an error.
    public init(
        byteOffset: UInt64, reason: String, lastGoodTransactionID: UInt64?, nextGoodTransactionID: UInt64?,
        nextGoodByteOffset: UInt64?
    ) {
        self.byteOffset = byteOffset
        self.reason = reason
        self.lastGoodTransactionID = lastGoodTransactionID
        self.nextGoodTransactionID = nextGoodTransactionID
        self.nextGoodByteOffset = nextGoodByteOffset
    }

    /// A one-line description naming the offset and the affected transactions.
    public var summary: String {
        var text = "damage at byte offset \(byteOffset): \(reason)"
        if let range = affectedTransactionIDs {
            text += "; affected transactions \(range.lowerBound)...\(range.upperBound)"
        } else if let last = lastGoodTransactionID {
            text += "; transactions after \(last) are affected"
        } else {
            text += "; every transaction may be affected"
        }
        return text
    }
}
