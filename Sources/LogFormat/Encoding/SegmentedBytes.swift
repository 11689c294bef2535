/// The segments of a payload read piecewise, and the storage of the one being read.
///
/// The reader keeps a raw pointer into the current segment, so the storage is allocated here, owned by this
/// object (which the reader retains), and freed only when the next segment replaces it.
final class SegmentedBytes {
    private let next: () throws(LogFormatError) -> [UInt8]?
    private var storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)

    /// Creates a source that calls `next` for each further segment (nil after the last).
    init(_ next: @escaping () throws(LogFormatError) -> [UInt8]?) { self.next = next }

    deinit { storage.deallocate() }

    /// Replaces the storage by `leftover` (the unread rest of the current segment, which may point into it)
    /// followed by further segments until at least `count` bytes are there or none is left, and returns it.
    func gather(keeping leftover: UnsafeRawBufferPointer, atLeast count: Int) throws(LogFormatError)
        -> UnsafeRawBufferPointer
    {
        // The leftover is a few bytes (a value that crosses segments); copy it out so the old segment can be
        // freed before the next one is read — only one segment is held at a time.
        var parts: [[UInt8]] = leftover.isEmpty ? [] : [Array(leftover)]
        var total = leftover.count
        storage.deallocate()
        storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
        while total < count, let part = try next() {
            total += part.count
            parts.append(part)
        }
        let gathered = UnsafeMutableRawBufferPointer.allocate(byteCount: total, alignment: 8)
        var filled = 0
        for part in parts {
            part.withUnsafeBytes { bytes in
                UnsafeMutableRawBufferPointer(rebasing: gathered[filled..<filled + bytes.count]).copyMemory(from: bytes)
            }
            filled += part.count
        }
        parts = []
        storage = gathered
        return UnsafeRawBufferPointer(gathered)
    }
}
