import Dispatch

/// The checks a rewrite's re-read of its new file hands to other threads while its scan goes on
/// (``LogReader/verifyingScan(_:)``): the checksums and padding of the chunk bodies the scan defers, a few MiB of
/// the file at a time, and the decoding of each checkpoint chunk's payload.
///
/// The re-read is the last step of a compaction, and it ran alone: one thread decoded the ordinary checkpoint chunks
/// (a 1M-post store's tags and authors with their lists of posts: four fifths of the re-read) and copied and hashed
/// every chunk body while the other cores had nothing left to do. The scan still reads and checks every frame
/// header, the grammar and every other frame in order; a Dispatch worker reads a group of bodies with its own
/// `pread` and checks each as ``FrameBody/checkStored(_:header:seed:)`` does in the scan, or decodes a chunk as the
/// scan's records are decoded. A scan learns whether all of it passed only from ``finish()``; the re-read then
/// scans again in order to fail as the scan that checks each in place fails.
final class ParallelScanChecks: Sendable {
    /// How many bytes of the file one check of bodies reads at most (a frame larger than this is a group of its own):
    /// a few MiB, so that the last groups of a file keep every core busy to the end.
    static let defaultGroupByteCount = 4 << 20

    private let file: SharedLogFile
    private let seed: UInt32
    private let groupByteCount: Int
    private let running = DispatchGroup()
    /// Bounds the checks handed over and not yet done (each holds a group's buffer or a chunk's payload): the scan
    /// waits for one to end rather than hold every chunk of a checkpoint it got ahead of.
    private let slots: DispatchSemaphore
    /// The group being gathered (the scanning thread's; under a lock only to make the class `Sendable`).
    private let gathering = LockedValue(Group())
    /// The first frame that failed, the first read that failed, and buffers to read into.
    private let state = LockedValue(State())

    /// Frames whose bodies are checked together: consecutive in the file, from `start` to `end`.
    private struct Group: Sendable {
        var frames: [(byteOffset: UInt64, header: FrameHeader)] = []
        var start: UInt64 = 0
        var end: UInt64 = 0
    }

    private struct State: @unchecked Sendable {
        var failedFrameOffset: UInt64?
        var readError: LogFormatError?
        /// Buffers handed back by finished checks (as many as ran at once), freed by ``finish()``.
        var buffers: [UnsafeMutableRawBufferPointer] = []
    }

    /// Checks frames of `file` (whose frames carry `seed`), reading at most `groupByteCount` bytes of bodies at a
    /// time (tests make it smaller).
    init(file: SharedLogFile, seed: UInt32, groupByteCount: Int = ParallelScanChecks.defaultGroupByteCount) {
        precondition(groupByteCount >= 1, "a group reads at least one byte")
        self.file = file
        self.seed = seed
        self.groupByteCount = groupByteCount
        slots = DispatchSemaphore(value: 2 * OrderedPipeline.workerCount + 2)
    }

    /// Hands over the body of the frame at `byteOffset`, whose header verified and whose extent is inside the file.
    func checkBody(ofFrameAt byteOffset: UInt64, header: FrameHeader) {
        let end = byteOffset + header.frameByteCount
        let ready = gathering.withLock { group -> Group? in
            var ready: Group?
            if !group.frames.isEmpty && (byteOffset != group.end || end - group.start > UInt64(groupByteCount)) {
                ready = group
                group = Group()
            }
            if group.frames.isEmpty { group.start = byteOffset }
            group.frames.append((byteOffset, header))
            group.end = end
            return ready
        }
        if let ready { start { self.check(ready) } }
    }

    /// Hands over the payload of the checkpoint chunk whose frame (or first fragment) is at `byteOffset`, to be
    /// decoded as a scan's record of it is.
    func decodeChunk(_ payload: SpannedPayload, at byteOffset: UInt64) {
        start {
            do throws(LogFormatError) {
                _ = try CheckpointChunk(decoding: payload)
            } catch {
                self.fail(at: byteOffset)
            }
        }
    }

    /// Waits for every check handed over; returns the offset of the first frame (in file order) that failed, or
    /// nil when all passed. Throws the first read error. Called once, by the scanning thread, also when the scan
    /// throws (no check runs after this returns).
    func finish() throws(LogFormatError) -> UInt64? {
        let last = gathering.withLock { group in
            defer { group = Group() }
            return group
        }
        if !last.frames.isEmpty { start { self.check(last) } }
        running.wait()
        let (failed, error, buffers) = state.withLock { state in
            defer { state.buffers = [] }
            return (state.failedFrameOffset, state.readError, state.buffers)
        }
        for buffer in buffers { buffer.deallocate() }
        if let error { throw error }
        return failed
    }

    private func start(_ work: @escaping @Sendable () -> Void) {
        slots.wait()
        DispatchQueue.global().async(group: running) {
            work()
            self.slots.signal()
        }
    }

    private func fail(at byteOffset: UInt64) {
        state.withLock { $0.failedFrameOffset = min($0.failedFrameOffset ?? byteOffset, byteOffset) }
    }

    /// Reads a group's bytes and checks each body in it.
    private func check(_ group: Group) {
        let count = Int(group.end - group.start)
        var buffer =
            state.withLock { $0.buffers.popLast() }
            ?? UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, groupByteCount), alignment: 16)
        if buffer.count < count {
            buffer.deallocate()
            buffer = .allocate(byteCount: count, alignment: 16)
        }
        defer { state.withLock { $0.buffers.append(buffer) } }
        let bytes = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
        let read: Int
        do throws(LogFormatError) {
            read = try file.file.read(into: bytes, at: group.start)
        } catch {
            state.withLock { $0.readError = $0.readError ?? error }
            return
        }
        for (byteOffset, header) in group.frames {
            let bodyStart = Int(byteOffset - group.start) + FrameHeader.byteCount
            let bodyEnd = Int(byteOffset - group.start) + Int(header.frameByteCount)
            // A short read (the file shrank underneath) fails the frames it did not reach.
            let failed =
                bodyEnd > read
                || FrameBody.checkStored(
                    UnsafeRawBufferPointer(rebasing: bytes[bodyStart..<bodyEnd]), header: header, seed: seed) != nil
            guard failed else { continue }
            fail(at: byteOffset)
            return
        }
    }
}
