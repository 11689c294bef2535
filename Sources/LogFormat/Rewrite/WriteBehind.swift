import Dispatch

/// The writes of a ``SequentialFrameWriter``'s full buffers, made in order on a thread of their own, so that a
/// `pwrite` that stalls in the kernel (h110 timed a rewrite's thread off the CPU for 65–68 ms at a time inside ext4's
/// buffered-write path, twice per 1M-post compaction, while the cores making its chunks idled on a full window) no
/// longer stops the thread that makes the file's next frames.
///
/// At most ``depth`` buffers are handed over and not yet written: the one handing over waits when that many are
/// (so the bytes held are bounded). The writes are made one after another in the order handed over, each followed
/// by its writeback's start, as the writer made them itself before; after one fails, the rest are not made and
/// the failure is thrown to the writer at its next hand-over or ``drain()``. The writer drains before it syncs
/// (nothing is synced, read back or renamed before every byte is written) and when it is destroyed (no write
/// outlives it, also when a rewrite fails or is cancelled: the caller removes its file only afterwards).
final class WriteBehind: Sendable {
    /// How many full buffers may wait for their write: enough to ride out a stall of the length measured (the
    /// writer fills a 4 MiB buffer in ≈ 40 ms during a 1M-post compaction), a few MB held at most.
    static let depth = 3

    private struct State {
        /// Buffers handed over, in order, whose write has not begun.
        var queued: [(bytes: [UInt8], byteOffset: UInt64)] = []
        /// Buffers handed over whose write has not ended yet (queued or being written).
        var pending = 0
        /// The first write that failed; no write is made after it.
        var failure: LogFormatError?
        /// Buffers written, kept (emptied) so that the next buffers reuse their memory.
        var spare: [[UInt8]] = []
        /// Buffers whose write ended, written or skipped (tests).
        var endedCount = 0
    }

    private let file: SharedLogFile
    private let state = ConditionLock(State())
    /// A serial queue of its own (not the global queues the pipelines' workers share): its thread may sleep in
    /// the kernel without taking a core from them.
    private let queue = DispatchQueue(label: "EventGraph.LogFormat.WriteBehind")

    init(_ file: SharedLogFile) { self.file = file }

    /// Hands `buffer` over to be written at `byteOffset`, after the buffers handed over before it; returns an empty
    /// array (one written before, when there is one) to fill next. Waits while ``depth`` buffers are pending.
    ///
    /// - Throws: the failure of a write handed over earlier (this buffer is then not written).
    func write(_ buffer: consuming [UInt8], at byteOffset: UInt64) throws(LogFormatError) -> [UInt8] {
        var buffer = Optional(buffer)
        let next = try state.withLock { (locked) throws(LogFormatError) -> [UInt8] in
            locked.wait { $0.pending < Self.depth || $0.failure != nil }
            if let failure = locked.value.failure { throw failure }
            locked.value.queued.append((buffer.take()!, byteOffset))
            locked.value.pending += 1
            return locked.value.spare.popLast() ?? []
        }
        queue.async { self.writeNext() }
        return next
    }

    /// Writes the first buffer queued, on the queue's thread, unless an earlier write failed.
    private func writeNext() {
        var (bytes, byteOffset, isSkipped) = state.withLock { locked in
            let next = locked.value.queued.removeFirst()
            return (next.bytes, next.byteOffset, locked.value.failure != nil)
        }
        var failure: LogFormatError?
        if !isSkipped {
            do throws(LogFormatError) {
                try file.file.write(bytes, at: byteOffset)
                file.file.startWriteback(at: byteOffset, count: bytes.count)
            } catch {
                failure = error
            }
        }
        bytes.removeAll(keepingCapacity: true)
        state.withLock { locked in
            if locked.value.failure == nil { locked.value.failure = failure }
            if locked.value.spare.count < Self.depth { locked.value.spare.append(bytes) }
            locked.value.endedCount += 1
            locked.value.pending -= 1
        }
        state.broadcast()
    }

    /// Waits until every buffer handed over is written (or skipped after a failure).
    ///
    /// - Throws: the first write's failure, if one failed.
    func drain() throws(LogFormatError) {
        try state.withLock { (locked) throws(LogFormatError) in
            locked.wait { $0.pending == 0 }
            if let failure = locked.value.failure { throw failure }
        }
    }

    /// Waits until no write is pending, without throwing (the writer going away after a failure).
    func waitForWrites() {
        state.withLock { $0.wait { $0.pending == 0 } }
    }

    /// Buffers handed over and not yet written (tests).
    var pendingCount: Int { state.withLock { $0.value.pending } }

    /// Buffers handed over and ended, written or skipped (tests).
    var endedCount: Int { state.withLock { $0.value.endedCount } }
}
