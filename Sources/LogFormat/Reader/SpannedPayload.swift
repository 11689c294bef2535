/// A payload as a scan found it: in memory when it fits one frame, or left in the file when it spans fragments — a
/// transaction's changeset (``FrameType/transactionFirst`` …) or a checkpoint chunk larger than one frame
/// (``FrameType/checkpointChunkFirst`` …).
///
/// A fragmented payload is never assembled: the scan verifies each fragment and keeps only where the run of
/// fragments is, and decoding reads the fragments again one at a time (``FragmentedPayload``). A reader therefore
/// holds at most one fragment of the payload, whatever its size, and a payload that does not decode fails at its
/// first bad byte rather than after the whole of it has been decompressed.
enum SpannedPayload: Sendable {
    case whole([UInt8])
    case fragmented(FragmentedPayload)
    /// One frame's body as stored, its checksum verified but not yet decompressed (a scan that defers
    /// decompression to the decoding of the transaction, ``LogReader/scan(fromTransactionID:defersEntityChunkBodies:defersTransactionDecompression:_:)``).
    case compressed(CompressedPayload)

    /// The payload's length.
    var byteCount: Int {
        switch self {
        case .whole(let bytes): bytes.count
        case .fragmented(let fragments): fragments.byteCount
        case .compressed(let stored): Int(stored.header.rawByteCount)
        }
    }

    /// The payload with a compressed body decompressed (``whole(_:)``); the others as they are.
    func decompressed() throws(LogFormatError) -> SpannedPayload {
        if case .compressed(let stored) = self { return .whole(try stored.decompressed()) }
        return self
    }

    /// The whole payload in one array (the fragments concatenated, read from the file).
    func bytes() throws(LogFormatError) -> [UInt8] {
        switch self {
        case .whole(let bytes):
            return bytes
        case .compressed(let stored):
            return try stored.decompressed()
        case .fragmented(let fragments):
            var joined: [UInt8] = []
            joined.reserveCapacity(fragments.byteCount)
            try fragments.forEachFragment { _, part throws(LogFormatError) in joined.append(contentsOf: part) }
            return joined
        }
    }

    /// The frames that store this transaction payload again (a copy into a rewritten or salvaged file): a whole
    /// payload split at `fragmentByteCount`, a fragmented one fragment by fragment, so that only one fragment is in
    /// memory.
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
            try fragments.forEachFrame(body)
        case .compressed:
            try decompressed().forEachFrame(
                transactionID: transactionID, fragmentByteCount: fragmentByteCount, body)
        }
    }

    /// The frames that store this checkpoint chunk payload again (a salvage's copy): one chunk frame for a whole
    /// payload (which came from one frame, so it fits one), the fragments one by one for a fragmented one.
    func forEachCheckpointChunkFrame(_ body: (OutgoingFrame) throws(LogFormatError) -> Void) throws(LogFormatError) {
        switch self {
        case .whole(let bytes):
            try body(OutgoingFrame(type: .checkpointChunk, payload: bytes))
        case .fragmented(let fragments):
            try fragments.forEachFrame(body)
        case .compressed:
            try decompressed().forEachCheckpointChunkFrame(body)
        }
    }
}

/// A transaction frame's LZ4 body whose checksum and padding a scan verified, left compressed: its decoding
/// decompresses it (once, where a verifying scan decompresses it as well).
struct CompressedPayload: Sendable {
    let body: [UInt8]
    let header: FrameHeader
    /// The file's dictionary in force at the frame (for ``FrameCodec/lz4Dictionary`` bodies; checked present).
    let dictionary: [UInt8]?
    let byteOffset: UInt64
    let path: String

    /// The payload, or the failure a verifying scan classifies at this frame (a deferring scan's caller scans
    /// again, verifying, to report it as such; see ``LogReader/scan(fromTransactionID:defersEntityChunkBodies:defersTransactionDecompression:_:)``).
    func decompressed() throws(LogFormatError) -> [UInt8] {
        let result = body.withUnsafeBytes { FrameBody.decompress($0, header: header, dictionary: dictionary) }
        switch result {
        case .success(let bytes):
            return bytes
        case .failure(let rejection):
            throw LogFormatError(
                .damaged, "transaction frame at byte offset \(byteOffset): \(rejection.reason)", path: path,
                byteOffset: byteOffset)
        }
    }
}

/// Which unit a run of fragment frames belongs to: the frame types of its first, middle and last fragments.
enum FragmentKind: Sendable {
    case transaction
    case checkpointChunk

    /// The frame type of fragment `index` of `count` (at least 2).
    func type(ofFragment index: Int, count: Int) -> FrameType {
        switch self {
        case .transaction:
            index == 0 ? .transactionFirst : index == count - 1 ? .transactionLast : .transactionMiddle
        case .checkpointChunk:
            index == 0 ? .checkpointChunkFirst : index == count - 1 ? .checkpointChunkLast : .checkpointChunkMiddle
        }
    }

    /// The unit, for messages ("fragment 3 of transaction 7", "fragment 3 of the checkpoint chunk").
    func unitName(transactionID: UInt64) -> String {
        switch self {
        case .transaction: "transaction \(transactionID)"
        case .checkpointChunk: "the checkpoint chunk"
        }
    }
}

/// Where the fragments of one payload are: a contiguous run of first/middle/last frames that a scan verified.
struct FragmentedPayload: Sendable {
    let kind: FragmentKind
    let file: SharedLogFile
    let seed: UInt32
    /// The file's dictionary in force at the fragments (for dictionary-compressed bodies).
    let dictionary: [UInt8]?
    /// The frame headers' transaction ID (0 for a checkpoint chunk's fragments).
    let transactionID: UInt64
    let firstByteOffset: UInt64
    let firstSequence: UInt64
    let fragmentCount: Int
    /// The sum of the fragments' raw lengths.
    let byteCount: Int

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
            guard let (header, padded) = try nextFrame() else { return nil }
            let seed = payload.seed
            let dictionary = payload.dictionary
            let result = padded.withUnsafeBytes {
                FrameBody.payload(of: $0, header: header, seed: seed, dictionary: dictionary)
            }
            switch result {
            case .success(let bytes):
                advance(past: header)
                return bytes
            case .failure(let rejection):
                throw changed(rejection.reason)
            }
        }

        /// Writes the next fragment's payload at the start of `destination` and returns its length, or nil after
        /// the last; a fragment longer than `destination` throws (its raw length is the file's word).
        mutating func next(into destination: UnsafeMutableRawBufferPointer) throws(LogFormatError) -> Int? {
            guard let (header, padded) = try nextFrame() else { return nil }
            let rawByteCount = Int(header.rawByteCount)
            guard rawByteCount <= destination.count else {
                throw changed("its payload is longer than the fragments' lengths added up during the scan")
            }
            let seed = payload.seed
            let dictionary = payload.dictionary
            let rejection = padded.withUnsafeBytes {
                FrameBody.payload(
                    of: $0, header: header, seed: seed, dictionary: dictionary,
                    into: UnsafeMutableRawBufferPointer(rebasing: destination[0..<rawByteCount]))
            }
            if let rejection { throw changed(rejection.reason) }
            advance(past: header)
            return rawByteCount
        }

        /// The next fragment's header, checked to be the one the scan verified there, and its stored body with
        /// its padding; nil after the last.
        private func nextFrame() throws(LogFormatError) -> (FrameHeader, [UInt8])? {
            guard index < payload.fragmentCount else { return nil }
            let shared = payload.file
            let headerBytes = try shared.file.read(count: FrameHeader.byteCount, at: byteOffset)
            let seed = payload.seed
            let decoded =
                headerBytes.count == FrameHeader.byteCount
                ? headerBytes.withUnsafeBytes { FrameHeader.decode($0, seed: seed) } : .failure(.limit("truncated"))
            guard case .success(let header) = decoded,
                header.type == payload.kind.type(ofFragment: index, count: payload.fragmentCount),
                header.transactionID == payload.transactionID, header.partIndex == UInt32(index),
                header.sequence == payload.firstSequence + UInt64(index)
            else { throw changed("its frame header no longer matches") }
            let paddedCount = Int(header.frameByteCount) - FrameHeader.byteCount
            let padded = try shared.file.read(count: paddedCount, at: byteOffset + UInt64(FrameHeader.byteCount))
            guard padded.count == paddedCount else { throw changed("its body is truncated") }
            return (header, padded)
        }

        private mutating func advance(past header: FrameHeader) {
            byteOffset += header.frameByteCount
            index += 1
        }

        func changed(_ reason: String) -> LogFormatError {
            let unit = payload.kind.unitName(transactionID: payload.transactionID)
            return LogFormatError(
                .damaged,
                "fragment \(index) of \(unit) at byte offset \(byteOffset) verified "
                    + "during the scan but not when read again (\(reason)); the file changed underneath the reader",
                path: payload.file.path, byteOffset: byteOffset)
        }
    }

    /// Calls `body` with each fragment's index and payload, in order; one fragment is in memory at a time.
    func forEachFragment(_ body: (Int, [UInt8]) throws(LogFormatError) -> Void) throws(LogFormatError) {
        var cursor = Cursor(self)
        while let part = try cursor.next() { try body(cursor.index - 1, part) }
    }

    /// Calls `body` with each fragment as a frame to write again (same type, transaction ID and part index).
    func forEachFrame(_ body: (OutgoingFrame) throws(LogFormatError) -> Void) throws(LogFormatError) {
        try forEachFragment { index, part throws(LogFormatError) in
            try body(
                OutgoingFrame(
                    type: kind.type(ofFragment: index, count: fragmentCount), transactionID: transactionID,
                    partIndex: UInt32(index), payload: part))
        }
    }

    /// The whole payload in one array, each fragment decompressed straight into it (no array per fragment); nil,
    /// with nothing read, when its length is more than `maxByteCount` (the length is the sum of the fragments'
    /// recorded raw lengths, the file's word: the array is allocated at it before any fragment is decompressed).
    ///
    /// A decoder that keeps the values it lends (a replay's changeset, ``TransactionRecord/assembled(maxByteCount:)``)
    /// refers to them in this array instead of copying each out of the fragment being read. Every fragment is read
    /// and verified before any byte is decoded: a fragment that fails when read again fails the whole payload.
    func assembled(maxByteCount: Int) throws(LogFormatError) -> [UInt8]? {
        guard byteCount <= maxByteCount else { return nil }
        var cursor = Cursor(self)
        var failure: LogFormatError?
        let whole = [UInt8](unsafeUninitializedCapacity: byteCount) { buffer, initializedCount in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            var written = 0
            do throws(LogFormatError) {
                while let count = try cursor.next(into: UnsafeMutableRawBufferPointer(rebasing: raw[written...])) {
                    written += count
                }
            } catch {
                failure = error
            }
            initializedCount = written
        }
        if let failure { throw failure }
        guard whole.count == byteCount else {
            throw cursor.changed("its payload is shorter than the fragments' lengths added up during the scan")
        }
        return whole
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
