/// Preallocated space: zeros the writer keeps written and synced ahead of the log's end.
///
/// On ext4, xfs and overlayfs an `fdatasync` after an append that grows the file must also commit the inode's new
/// size (a journal commit), which an `fdatasync` after an overwrite of blocks the file already has does not; on a
/// busy machine that commit waits for everything else the journal holds, and the appending save pays for it (h54's
/// measurement in BENCHMARKS.md). So the leader of a batch that would grow the file writes zeros after it (an eighth
/// of the log, at least 64 KiB, at most ``LogWriter/Options/preallocationByteCount``), synced with the batch, and
/// the batches after it overwrite those zeros until they run out; closing cuts the zeros off again. Real zeros, not
/// `fallocate`: its unwritten extents are converted on their first write, which is a journaled change again.
///
/// No frame in a run of zeros verifies, so recovery (`Docs/FileFormat.md` §4) finds no proof of durability after
/// the last committed unit and treats the zeros as a torn tail, never as damage; a writer's open cuts them off and
/// reports them as ``RecoveryReport/trimmedPreallocationByteCount``, not as a torn tail, when every byte is zero
/// (a read-only scan marks such a tail ``TornTail/isPreallocatedSpace``). A scan *beside* the writer sees the
/// frames it writes into the zeros while the scan reads: such scans stop at the writer's finished end
/// (``LogWriter/finishedEnd()``) or re-read a failed frame before calling it damage (§4, "Scanning a live log").
extension LogWriter {
    /// What a leader does to the file's end after writing its batch.
    enum SpaceChange: Equatable {
        /// The batch ends inside the preallocated space (or nothing is preallocated): nothing.
        case unchanged
        /// Write zeros from the batch's end up to this offset (the file grows once for many batches).
        case extend(UInt64)
        /// The batch is the last before the writer closes: cut the zeros after it off.
        case trim
    }

    /// The smallest run of zeros written ahead at a time.
    static let minimumPreallocation: UInt64 = 64 << 10

    /// What the leader of a batch ending at `batchEnd` does to the space after it.
    func preallocation(batchEnd: UInt64, closing: Bool, _ state: State, inMemory: Bool) -> SpaceChange {
        if closing { return state.allocatedEnd > batchEnd ? .trim : .unchanged }
        guard options.durability != .none, !inMemory, options.preallocationByteCount > 0 else { return .unchanged }
        return Self.extension(
            batchEnd: batchEnd, allocatedEnd: state.allocatedEnd, maximum: UInt64(options.preallocationByteCount)
        ).map(SpaceChange.extend) ?? .unchanged
    }

    /// Where the zeros written after a batch ending at `batchEnd` end, when the batch reaches past the preallocated
    /// space ending at `allocatedEnd`: an eighth of the log ahead (at least 64 KiB, at most `maximum`), rounded up to
    /// 4 KiB; nil when the batch fits, or when the end would overflow.
    static func `extension`(batchEnd: UInt64, allocatedEnd: UInt64, maximum: UInt64) -> UInt64? {
        guard batchEnd > allocatedEnd, maximum > 0 else { return nil }
        let ahead = min(maximum, max(minimumPreallocation, batchEnd / 8))
        let (end, overflow) = batchEnd.addingReportingOverflow(ahead)
        guard !overflow, end <= UInt64.max - 4095 else { return nil }
        return (end + 4095) & ~4095
    }
}

extension LogFile {
    /// Whether the file lives in a ``MemoryVolume`` (syncs do nothing there; nothing is preallocated).
    var isInMemory: Bool { MemoryVolume.file(descriptor: descriptor) != nil }

    /// Writes zeros over `start..<end` (preallocated space). Not a fault-injection point: the zeros hold no data, and
    /// the write counts of the fault tests stay those of the frames; a failure poisons the writer like any write.
    func writeZeros(from start: UInt64, to end: UInt64) throws(LogFormatError) {
        let descriptor = self.descriptor
        let path = self.path
        var offset = start
        while offset < end {
            let count = Int(min(end - offset, UInt64(Self.zeros.count)))
            let at = offset
            // The typed error is carried out of withUnsafeBytes as a Result (as in `write(_:at:)`).
            let result = Self.zeros.withUnsafeBytes { raw in
                Result { () throws(LogFormatError) in
                    try SystemCalls.pwrite(
                        descriptor, UnsafeRawBufferPointer(rebasing: raw.prefix(count)), at: at, path: path)
                }
            }
            try result.get()
            offset += UInt64(count)
        }
    }

    /// Cuts the preallocated zeros after `end` off (the writer closes). Not a fault-injection point either.
    func cutZeros(after end: UInt64) throws(LogFormatError) {
        try SystemCalls.truncate(descriptor, to: end, path: path)
    }

    /// Whether every byte of `start..<end` is zero (read 64 KiB at a time; bytes past the file's end count as zero).
    func isZeroFilled(from start: UInt64, to end: UInt64) throws(LogFormatError) -> Bool {
        var offset = start
        while offset < end {
            let bytes = try read(count: Int(min(end - offset, 64 << 10)), at: offset)
            if bytes.isEmpty { return true }
            if bytes.contains(where: { $0 != 0 }) { return false }
            offset += UInt64(bytes.count)
        }
        return true
    }

    /// The zeros written ahead, 64 KiB at a time.
    private static let zeros = [UInt8](repeating: 0, count: 64 << 10)
}
