extension LogScanner {
    /// The transactions that a torn tail starting at `offset` held parts of, as far as their frame headers still
    /// verify (a header checksum covers the transaction ID, so a listed ID was really written): what recovery
    /// drops, named for the report. Transactions at or below `lastCommitted` are not listed.
    ///
    /// Walks frame by frame while headers verify and 8 bytes at a time where they do not, to the end of the
    /// window; it reads headers only, so its cost is bounded by the tail's size.
    mutating func transactionIDs(inTailFrom offset: UInt64, after lastCommitted: UInt64) throws(LogFormatError)
        -> [UInt64]
    {
        var found: Set<UInt64> = []
        var candidate = offset
        let seed = self.seed
        let alignment = UInt64(FrameHeader.alignment)
        while candidate <= window.limit, window.limit - candidate >= UInt64(FrameHeader.byteCount) {
            let decoded = try window.withBytes(at: candidate, count: FrameHeader.byteCount) { raw in
                try? FrameHeader.decode(raw, seed: seed).get()
            }
            guard let header = decoded ?? nil else {
                candidate += alignment
                continue
            }
            switch header.type {
            case .transaction, .transactionFirst, .transactionMiddle, .transactionLast, .blob:
                if header.transactionID > lastCommitted { found.insert(header.transactionID) }
            default:
                break
            }
            // A verified header's length may still run past the end of the file; the loop condition stops there.
            let (next, overflow) = candidate.addingReportingOverflow(max(header.frameByteCount, alignment))
            guard !overflow else { break }
            candidate = next
        }
        return found.sorted()
    }

    /// Whether every byte from `offset` to the window's end is zero as this scan reads it (from what it buffered
    /// where it can): a torn tail of zeros is preallocated space (``TornTail/isPreallocatedSpace``). The scan's own
    /// view decides, not a later read: a writer appending beside the scan may have written there since.
    mutating func isZeroFilled(from offset: UInt64) throws(LogFormatError) -> Bool {
        var position = offset
        while position < window.limit {
            let count = Int(min(window.limit - position, 64 << 10))
            guard let isZero = try window.withBytes(at: position, count: count, { raw in !raw.contains { $0 != 0 } })
            else { return true }  // the file shrank underneath the scan: nothing more was written
            if !isZero { return false }
            position += UInt64(count)
        }
        return true
    }
}
