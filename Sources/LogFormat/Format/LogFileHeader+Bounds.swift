/// The range of every header field a writer can produce. A copy whose checksum verifies but whose field is out of
/// range is unusable (checksums are no defence against a crafted file, whose author knows the algorithm): the
/// reader falls back to the other copy, and a file with no usable copy is damaged.
extension LogFileHeader {
    /// Byte offset of the 1.1 field ``maxTransactionByteCount`` and of the reserved bytes after it.
    static let maxTransactionByteCountOffset = 88
    static let reservedRange = 92..<124

    /// The first out-of-range field of a copy whose checksum verified, with its offset in the copy; nil when every
    /// field is in range.
    ///
    /// A newer major version may mean something else by these bytes, so only this reader's major version is
    /// judged (a newer one is refused by ``decode(region:path:)`` with its own error).
    static func outOfRangeField(_ header: LogFileHeader, _ bytes: UnsafeRawBufferPointer) -> (String, Int)? {
        guard header.majorVersion != 0 else { return ("major version is 0, which was never written", 8) }
        guard header.majorVersion == currentMajorVersion else { return nil }
        let headerByteCount = bytes.loadLE(UInt32.self, at: 12)
        guard headerByteCount == UInt32(copyByteCount) else {
            return ("headerByteCount is \(headerByteCount), not \(copyByteCount)", 12)
        }
        // The counters below are incremented by rewrites and appends; a value with no successor could only
        // overflow.
        guard header.generation < UInt64.max else { return ("generation is \(header.generation), the largest", 64) }
        guard header.baseSequence != 0, header.baseSequence < UInt64.max else {
            return ("baseSequence is \(header.baseSequence), outside 1...\(UInt64.max - 1)", 72)
        }
        guard Int(header.maxTransactionByteCount) <= LogLimits.maxTransactionByteCount else {
            return (
                "maxTransactionByteCount is \(header.maxTransactionByteCount), more than the format's limit of "
                    + "\(LogLimits.maxTransactionByteCount)", maxTransactionByteCountOffset
            )
        }
        // A newer minor version may give the reserved bytes a meaning this reader can ignore.
        if header.minorVersion <= currentMinorVersion,
            let index = reservedRange.first(where: { bytes[$0] != 0 })
        {
            return ("reserved byte \(index) is \(bytes[index]), not 0", index)
        }
        return nil
    }
}

extension LogFileHeader {
    /// The header of a new file that replaces this one (a rewrite or a salvage): the same store, features and
    /// transaction limit, a new file UUID, the next generation, and the given first sequence number.
    ///
    /// - Throws: ``LogFormatError/Code/limitExceeded`` when a counter has no room left (only a crafted file gets
    ///   there: 2⁶⁴ − 1 rewrites or frames).
    func successor(baseSequence: UInt64, path: String) throws(LogFormatError) -> LogFileHeader {
        guard generation < UInt64.max - 1 else {
            throw LogFormatError(
                .limitExceeded, "the store's generation is \(generation); it cannot be rewritten again", path: path)
        }
        guard baseSequence < UInt64.max else {
            throw LogFormatError(
                .limitExceeded, "the log has used every frame sequence number; salvage it into a new file", path: path)
        }
        var header = LogFileHeader(
            storeUUID: storeUUID, generation: generation + 1, baseSequence: baseSequence,
            maxTransactionByteCount: transactionByteLimit)
        header.compatibleFeatures = compatibleFeatures
        return header
    }
}
