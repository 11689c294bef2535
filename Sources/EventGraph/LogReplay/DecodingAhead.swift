import Dispatch
import Foundation
package import LogFormat
import Synchronization

/// Delivers a scan's records in log order with each large transaction's changeset decoded ahead, on another thread,
/// while the transactions before it are applied: a replay's two halves on two cores. A store's open (the writer's
/// recovery scan), its read-only views and change feed (`FileBackend.replay`) and egctl's replay all deliver their
/// records through it.
///
/// Every record is still processed by the caller's thread, one at a time, in log order: a transaction waits in the
/// window (``DecodingWindow``) until the window is full or another kind of record comes, which is processed after
/// every transaction before it. A transaction whose processing fails (or whose decoding failed) stops the delivery:
/// the transactions decoded after it are dropped, as a scan that decoded nothing ahead would not have delivered them.
package struct DecodingAhead {
    /// The smallest payload decoded on the other thread: a smaller one is decoded when it is delivered, for which
    /// handing it over would cost more than decoding it.
    package static let defaultSmallestPayloadDecodedAside = 64 << 10

    private var pending = DecodingWindow()
    private let smallestPayloadDecodedAside: Int
    private let companion: (any DecodingCompanion)?

    /// The most transactions that were ever waiting at once (the oldest included).
    package var maxWaitingCount: Int { pending.maxWaitingCount }

    /// - Parameters:
    ///   - smallestPayloadDecodedAside: the smallest payload decoded on the other thread (tests: 0 decodes every one
    ///     there).
    ///   - companion: told before and after each decoding on the other thread (egctl's heap prefaulter).
    package init(
        smallestPayloadDecodedAside: Int = Self.defaultSmallestPayloadDecodedAside,
        companion: (any DecodingCompanion)? = nil
    ) {
        self.smallestPayloadDecodedAside = smallestPayloadDecodedAside
        self.companion = companion
    }

    /// Takes the scan's next record; calls `process` with it (and its decoded changeset, for a transaction) now or
    /// later, after every record taken before it.
    package mutating func take(
        _ record: LogRecord, process: (LogRecord, ReplayChangeset?) throws -> Void
    ) throws {
        guard case .transaction(let transaction) = record else {
            try drain(process)
            return try process(record, nil)
        }
        pending.append(
            record,
            ChangesetDecoding(
                transaction, smallestPayloadDecodedAside: smallestPayloadDecodedAside, companion: companion))
        while pending.isFull { try processOldest(process) }
    }

    /// Processes every transaction still waiting (the scan ended, or it failed after delivering them).
    package mutating func drain(_ process: (LogRecord, ReplayChangeset?) throws -> Void) throws {
        while !pending.isEmpty { try processOldest(process) }
    }

    private mutating func processOldest(_ process: (LogRecord, ReplayChangeset?) throws -> Void) throws {
        let (record, decoding) = pending.removeOldest()
        do {
            try process(record, try decoding.changeset())
        } catch {
            pending.removeAll()
            throw error
        }
    }
}

/// What runs beside the decodings on the decoding thread (egctl's heap prefaulter, which uses the thread's idle
/// time).
package protocol DecodingCompanion: Sendable {
    /// Before a transaction is decoded there.
    func willDecode()
    /// After a transaction of `payloadByteCount` bytes was decoded there and handed over; `isIdle` says whether no
    /// other transaction waits to be decoded.
    func didDecode(payloadByteCount: Int, isIdle: () -> Bool)
}

/// The transactions delivered by the scan and not processed yet, oldest first, each with its decoding (started when it
/// was delivered).
///
/// Full past ``maxCount`` transactions or ``maxPayloadByteCount`` bytes of their payloads besides the oldest's (each
/// counted as the larger of its length and the stored bytes its record holds): the decodings ahead of the replay, and
/// the memory they hold, stay bounded (a payload's size is bounded by the log's limits); the oldest is always taken,
/// however large. The count is what the 1M-post demo store needs: its large saves come after runs of small ones, and
/// the decoding must have reached a large one while the small ones before it are applied (ahead by 2, 16 and 64
/// transactions, egctl's replaying thread waited 0.44, 0.16–0.18 and 0.03–0.06 s of a 1–1.4 s replay: BENCHMARKS.md,
/// h84).
private struct DecodingWindow {
    static let maxCount = 64
    static let maxPayloadByteCount = 16 << 20

    private typealias Entry = (record: LogRecord, decoding: ChangesetDecoding, payloadByteCount: Int)
    /// The entries from ``oldest`` on; the ones before it were taken (`nil`, so that what they hold is freed).
    private var entries: [Entry?] = []
    private var oldest = 0
    /// The payload bytes of the entries after the oldest.
    private var payloadByteCountAhead = 0

    /// The most transactions that were ever waiting at once (the oldest included).
    private(set) var maxWaitingCount = 0

    var isEmpty: Bool { oldest == entries.count }

    var isFull: Bool {
        entries.count - oldest > Self.maxCount
            || (entries.count - oldest > 1 && payloadByteCountAhead > Self.maxPayloadByteCount)
    }

    mutating func append(_ record: LogRecord, _ decoding: ChangesetDecoding) {
        // A frame header's raw length is the file's word, checked only when the frame is decompressed: a waiting
        // record counts the stored bytes it holds if they are more.
        var byteCount = 0
        if case .transaction(let transaction) = record {
            byteCount = max(transaction.payloadByteCount, transaction.heldByteCount)
        }
        if !isEmpty { payloadByteCountAhead += byteCount }
        entries.append((record, decoding, byteCount))
        maxWaitingCount = max(maxWaitingCount, entries.count - oldest)
    }

    /// Drops every waiting transaction (their decodings finish unread).
    mutating func removeAll() {
        entries.removeAll()
        oldest = 0
        payloadByteCountAhead = 0
    }

    mutating func removeOldest() -> (record: LogRecord, decoding: ChangesetDecoding) {
        guard oldest < entries.count, let entry = entries[oldest] else {
            preconditionFailure("no transaction is waiting to be applied")
        }
        entries[oldest] = nil
        oldest += 1
        if let next = entries.dropFirst(oldest).first, let next { payloadByteCountAhead -= next.payloadByteCount }
        if oldest >= Self.maxCount {
            entries.removeFirst(oldest)
            oldest = 0
        }
        return (entry.record, entry.decoding)
    }
}

/// A transaction's changeset being decoded on another thread (a large one) or already decoded (a small one, for
/// which handing it over would cost more than decoding it): ``changeset()`` waits for it.
private final class ChangesetDecoding: Sendable {
    /// One thread decodes (a serial queue: in log order, ahead of the replay as far as ``DecodingWindow`` allows,
    /// and the allocations of one more thread are all it adds to the process's memory). Stores opening at once
    /// share it; each waits only for its own transactions.
    private static let queue = DispatchQueue(label: "EventGraph.changeset-decoding")

    /// The one `Synchronization.Mutex` of the package (elsewhere ``LockedValue``, which the thread sanitizer can
    /// follow: see ``PthreadMutex``), one per transaction, because it is never contended: the decoding thread
    /// releases it before it signals `done`, and ``changeset()`` takes it only after waiting for `done`. An
    /// uncontended `Mutex` is one atomic exchange, which the sanitizer sees; a `LockedValue` would cost three
    /// allocations per transaction of a replay.
    private let result: Mutex<Result<ReplayChangeset, LogFormatError>?>
    private let done: DispatchSemaphore?

    /// Large transactions queued for decoding and not started yet.
    private static let queuedCount = Atomic<Int>(0)

    /// Starts decoding `transaction`: now when its payload is smaller than `smallestPayloadDecodedAside`, otherwise
    /// on the decoding thread, with `companion` told before and after.
    init(_ transaction: TransactionRecord, smallestPayloadDecodedAside: Int, companion: (any DecodingCompanion)?) {
        guard transaction.payloadByteCount >= smallestPayloadDecodedAside else {
            result = Mutex(Self.decode(transaction))
            done = nil
            return
        }
        result = Mutex(nil)
        done = DispatchSemaphore(value: 0)
        Self.queuedCount.add(1, ordering: .relaxed)
        Self.queue.async { [self] in
            Self.queuedCount.subtract(1, ordering: .relaxed)
            companion?.willDecode()
            let decoded = Self.decode(transaction)
            result.withLock { $0 = decoded }
            done!.signal()
            companion?.didDecode(payloadByteCount: transaction.payloadByteCount) {
                Self.queuedCount.load(ordering: .relaxed) == 0
            }
        }
    }

    private static func decode(_ transaction: TransactionRecord) -> Result<ReplayChangeset, LogFormatError> {
        Result { () throws(LogFormatError) in try ReplayChangeset(transaction) }
    }

    /// The decoded changeset, or the error that decoding it threw; once (it is moved out, so that its byte buffer
    /// stays unshared and can be reused once applied).
    func changeset() throws(LogFormatError) -> ReplayChangeset {
        done?.wait()
        return try result.withLock { decoded in
            defer { decoded = nil }
            return decoded!
        }.get()
    }
}

/// Thrown by a scan's consumer to stop the scan early without it counting as an error (a replay up to a
/// transaction: `egctl replay --until`, a view *as of* a transaction).
package struct StopScan: Error {
    package init() {}
}
