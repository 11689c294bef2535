/// A committed transaction's changeset payload as a scan found it: in memory when it fits one frame, or left in
/// the file when it spans fragments.
///
/// A fragmented transaction is never assembled: the scan verifies each fragment and keeps only where the run of
/// fragments is, and decoding reads the fragments again one at a time (``FragmentedPayload``). A reader therefore
/// holds at most one fragment of a transaction's payload, whatever its size, and a payload that does not decode
/// fails at its first bad byte rather than after the whole transaction has been decompressed.
enum TransactionPayload: Sendable {
    case whole([UInt8])
    case fragmented(FragmentedPayload)

    /// The payload's length.
    var byteCount: Int {
        switch self {
        case .whole(let bytes): bytes.count
        case .fragmented(let fragments): fragments.byteCount
        }
    }

    /// The whole payload in one array (the fragments concatenated, read from the file).
    func bytes() throws(LogFormatError) -> [UInt8] {
        switch self {
        case .whole(let bytes):
            return bytes
        case .fragmented(let fragments):
            var joined: [UInt8] = []
            joined.reserveCapacity(fragments.byteCount)
            try fragments.forEachFragment { _, part throws(LogFormatError) in joined.append(contentsOf: part) }
            return joined
        }
    }

    /// The frames that store this payload again (a copy into a rewritten or salvaged file): a whole payload split
    /// at `fragmentByteCount`, a fragmented one fragment by fragment, so that only one fragment is in memory.
    func forEachFrame(
        transactionID: UInt64, fragmentByteCount: Int, _ body: (OutgoingFrame) throws(LogFormatError) -> Void
    ) throws(LogFormatError) {
        switch self {
        case .whole(let bytes):
            for frame in OutgoingFrame.transactionFrames(
                id: transactionID, payload: bytes, fragmentByteCount: fragmentByteCount)
            {
                try body(frame)
            }
        case .fragmented(let fragments):
            try fragments.forEachFragment { index, part throws(LogFormatError) in
                try body(
                    OutgoingFrame(
                        type: FragmentedPayload.type(ofFragment: index, count: fragments.fragmentCount),
                        transactionID: transactionID, partIndex: UInt32(index), payload: part))
            }
        }
    }
}

/// Where the fragments of one transaction are: a contiguous run of first/middle/last frames that a scan verified.
struct FragmentedPayload: Sendable {
    let file: SharedLogFile
    let seed: UInt32
    /// The file's dictionary in force at the fragments (for dictionary-compressed bodies).
    let dictionary: [UInt8]?
    let transactionID: UInt64
    let firstByteOffset: UInt64
    let firstSequence: UInt64
    let fragmentCount: Int
    /// The sum of the fragments' raw lengths.
    let byteCount: Int

    static func type(ofFragment index: Int, count: Int) -> FrameType {
        index == 0 ? .transactionFirst : index == count - 1 ? .transactionLast : .transactionMiddle
    }

    /// Reads the fragments one after another, verifying each again.
    struct Cursor {
        let payload: FragmentedPayload
        var index = 0
        var byteOffset: UInt64

        init(_ payload: FragmentedPayload) {
            self.payload = payload
            self.byteOffset = payload.firstByteOffset
        }

        /// The next fragment's payload, or nil after the last.
        mutating func next() throws(LogFormatError) -> [UInt8]? {
            guard index < payload.fragmentCount else { return nil }
            let shared = payload.file
            let headerBytes = try shared.file.read(count: FrameHeader.byteCount, at: byteOffset)
            let seed = payload.seed
            let decoded =
                headerBytes.count == FrameHeader.byteCount
                ? headerBytes.withUnsafeBytes { FrameHeader.decode($0, seed: seed) } : .failure(.limit("truncated"))
            guard case .success(let header) = decoded,
                header.type == FragmentedPayload.type(ofFragment: index, count: payload.fragmentCount),
                header.transactionID == payload.transactionID, header.partIndex == UInt32(index),
                header.sequence == payload.firstSequence + UInt64(index)
            else { throw changed("its frame header no longer matches") }
            let paddedCount = Int(header.frameByteCount) - FrameHeader.byteCount
            let padded = try shared.file.read(count: paddedCount, at: byteOffset + UInt64(FrameHeader.byteCount))
            guard padded.count == paddedCount else { throw changed("its body is truncated") }
            let dictionary = payload.dictionary
            let result = padded.withUnsafeBytes {
                FrameBody.payload(of: $0, header: header, seed: seed, dictionary: dictionary)
            }
            switch result {
            case .success(let bytes):
                byteOffset += header.frameByteCount
                index += 1
                return bytes
            case .failure(let rejection):
                throw changed(rejection.reason)
            }
        }

        private func changed(_ reason: String) -> LogFormatError {
            LogFormatError(
                .damaged,
                "fragment \(index) of transaction \(payload.transactionID) at byte offset \(byteOffset) verified "
                    + "during the scan but not when read again (\(reason)); the file changed underneath the reader",
                path: payload.file.path, byteOffset: byteOffset)
        }
    }

    /// Calls `body` with each fragment's index and payload, in order; one fragment is in memory at a time.
    func forEachFragment(_ body: (Int, [UInt8]) throws(LogFormatError) -> Void) throws(LogFormatError) {
        var cursor = Cursor(self)
        while let part = try cursor.next() { try body(cursor.index - 1, part) }
    }

    /// Runs `body` with a reader over the whole payload that pulls fragments in as it reads.
    func withReader<Result>(_ body: (inout ByteReader) throws(LogFormatError) -> Result) throws(LogFormatError)
        -> Result
    {
        var cursor = Cursor(self)
        let segments = SegmentedBytes { () throws(LogFormatError) in try cursor.next() }
        var reader = ByteReader(segments: segments, byteCount: byteCount)
        return try body(&reader)
    }
}
