/// One block of memory that the bodies of a transaction's payload frames are compressed into, side by side, by the
/// threads of a ``SharedFrameEncoding``: mapped for the block alone and unmapped when the last body in it is let go
/// (once the log has queued them), so that no thread's malloc arena keeps those megabytes.
///
/// Bodies compressed into arrays of their own by a save's encoding thread came from that thread's arena: freed
/// there after the log copied them, they were not reused by the saving thread's later allocations (the install),
/// and a bulk save of 100,000 posts peaked 18–38 MB higher (h106).
///
/// Each frame has a room of its own (``LZ4/bound(_:)`` of its payload, enough for the body compressed or raw), at
/// an offset fixed when the block is made: threads write different rooms at once, and each body is read only after
/// the thread that wrote it handed it back under the encoding's lock.
final class FrameBodyBlock: @unchecked Sendable {
    private let base: UnsafeMutableRawPointer
    private let byteCount: Int
    /// Whether ``base`` was mapped (else allocated, when the system refused a mapping).
    private let isMapped: Bool
    /// Where each frame's room starts, and where the last ends (one more than the frames).
    private let offsets: [Int]

    /// A block with a room for the body of each of `frames`.
    init(rooms frames: [OutgoingFrame]) {
        var offsets = [0]
        offsets.reserveCapacity(frames.count + 1)
        for frame in frames {
            // A frame's payload is a part of one array in memory: their sum cannot overflow.
            let (end, overflow) = offsets.last!.addingReportingOverflow(LZ4.bound(frame.payload.count))
            precondition(!overflow, "the rooms of a payload's frames fit in memory")
            offsets.append(end)
        }
        self.offsets = offsets
        byteCount = max(offsets.last!, 1)
        if let mapped = SystemCalls.mapMemory(byteCount: byteCount) {
            (base, isMapped) = (mapped, true)
        } else {
            (base, isMapped) = (UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 16), false)
        }
    }

    deinit {
        if isMapped { SystemCalls.unmapMemory(base, byteCount: byteCount) } else { base.deallocate() }
    }

    /// The room of frame `index` (written by the one thread that took the frame).
    func room(_ index: Int) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(start: base + offsets[index], count: offsets[index + 1] - offsets[index])
    }

    /// The first `count` bytes of frame `index`'s room: its body once written.
    func body(_ index: Int, count: Int) -> UnsafeRawBufferPointer {
        precondition(count <= offsets[index + 1] - offsets[index], "a body fits its room")
        return UnsafeRawBufferPointer(start: base + offsets[index], count: count)
    }
}
