/// Reads the primitive encodings written by ``ByteWriter`` from a borrowed byte buffer.
///
/// Every read is bounds-checked once, up front, and throws ``LogFormatError/Code/malformedPayload`` with the byte
/// offset within the payload where the bad value starts; nothing a corrupt payload contains can make the reader
/// trap or allocate more than a small multiple of the payload's own size:
///
/// - a varint longer than 10 bytes, one that overflows 64 bits, or one not in its shortest form is rejected;
/// - a length or element count is checked against its ``LogLimits`` limit *and* against the bytes that remain
///   (a list of `n` elements needs at least `n × minimumElementByteCount` bytes) before anything is allocated;
/// - strings must be valid UTF-8.
///
/// The reader borrows the buffer: create it with ``withReader(over:_:)`` (or ``init(_:)`` inside a
/// `withUnsafeBytes` closure) and never let it outlive that closure. A payload too large to hold at once (a
/// fragmented transaction) is read from ``SegmentedBytes`` instead, one segment at a time; a value that crosses
/// segments is gathered, so every decoder reads both kinds the same way.
struct ByteReader {
    /// The bytes being read: the whole payload, or the current segment of a segmented one. Valid only for the
    /// lifetime of the closure that lent it (or of ``segments``, which owns a segment's storage).
    private var buffer: UnsafeRawBufferPointer
    /// The position of the next byte in ``buffer``.
    private var position: Int
    /// The payload offset of `buffer[0]` (0 unless segmented).
    private var segmentStart: Int
    /// The number of bytes in the payload.
    let byteCount: Int
    /// Where further segments come from, for a payload too large to be held at once (a fragmented transaction).
    private let segments: SegmentedBytes?

    /// Creates a reader at the start of `buffer`. The reader must not escape the scope that owns the buffer.
    init(_ buffer: UnsafeRawBufferPointer) {
        self.buffer = buffer
        self.position = 0
        self.segmentStart = 0
        self.byteCount = buffer.count
        self.segments = nil
    }

    /// Creates a reader over a payload of `byteCount` bytes delivered in segments.
    init(segments: SegmentedBytes, byteCount: Int) {
        self.buffer = UnsafeRawBufferPointer(start: nil, count: 0)
        self.position = 0
        self.segmentStart = 0
        self.byteCount = byteCount
        self.segments = segments
    }

    /// Runs `body` with a reader over the bytes of `bytes`; the reader is valid only inside `body`.
    static func withReader<Result>(
        over bytes: [UInt8], _ body: (inout ByteReader) throws(LogFormatError) -> Result
    ) throws(LogFormatError) -> Result {
        // `Array.withUnsafeBytes` only rethrows untyped errors, so the typed error travels inside a `Result`.
        let result: Swift.Result<Result, LogFormatError> = bytes.withUnsafeBytes { buffer in
            Swift.Result { () throws(LogFormatError) -> Result in
                var reader = ByteReader(buffer)
                return try body(&reader)
            }
        }
        return try result.get()
    }

    /// The payload offset of the next byte to read.
    var offset: Int { segmentStart &+ position }

    /// The number of bytes not read yet.
    var remainingByteCount: Int { byteCount &- offset }

    /// Whether every byte has been read.
    var isAtEnd: Bool { offset == byteCount }

    /// Makes at least `count` bytes (which must remain in the payload) readable at `position`: the unread rest of
    /// the segment followed by as many further segments as needed, in one buffer.
    private mutating func gather(_ count: Int, for field: StaticString) throws(LogFormatError) {
        let start = offset
        guard let segments, count <= remainingByteCount else { throw truncated(field, needing: count, at: start) }
        buffer = try segments.gather(keeping: UnsafeRawBufferPointer(rebasing: buffer[position...]), atLeast: count)
        segmentStart = start
        position = 0
        guard buffer.count >= count else { throw truncated(field, needing: count, at: start) }
    }

    // MARK: Errors

    /// A ``LogFormatError/Code/malformedPayload`` error at `byteOffset` (the current offset by default).
    func malformed(_ message: String, at byteOffset: Int? = nil) -> LogFormatError {
        LogFormatError(.malformedPayload, message, byteOffset: UInt64(byteOffset ?? offset))
    }

    private func truncated(_ field: StaticString, needing byteCount: Int, at start: Int) -> LogFormatError {
        malformed(
            "the payload ends after \(byteCount) bytes, but \(field) needs \(byteCount) byte(s) "
                + "at byte offset \(start)",
            at: start)
    }

    /// Throws unless at least `count` bytes remain, and makes them contiguous. `count` must not be negative.
    @inline(__always)
    private mutating func require(_ count: Int, for field: StaticString) throws(LogFormatError) {
        guard count <= buffer.count &- position else { return try gather(count, for: field) }
    }

    // MARK: Fixed-width values

    /// Reads one byte.
    @inline(__always)
    mutating func readUInt8(_ field: StaticString) throws(LogFormatError) -> UInt8 {
        // Inlined for the byte at hand (every value's and operation's tag is one); the end of a segment or of the
        // payload goes out of line.
        if position < buffer.count {
            let value = buffer[position]
            position &+= 1
            return value
        }
        return try readUInt8AfterSegment(field)
    }

    /// ``readUInt8(_:)`` past the current segment: the next one's first byte, or the error that the payload ended.
    @inline(never)
    private mutating func readUInt8AfterSegment(_ field: StaticString) throws(LogFormatError) -> UInt8 {
        try require(1, for: field)
        let value = buffer[position]
        position &+= 1
        return value
    }

    /// Reads a byte that must be 0 (`false`) or 1 (`true`).
    mutating func readBool(_ field: StaticString) throws(LogFormatError) -> Bool {
        let start = offset
        switch try readUInt8(field) {
        case 0: return false
        case 1: return true
        case let other: throw malformed("\(field) is the byte \(other), but a Boolean must be 0 or 1", at: start)
        }
    }

    /// Reads two bytes, least significant first.
    mutating func readUInt16LE(_ field: StaticString) throws(LogFormatError) -> UInt16 {
        try require(2, for: field)
        let value = buffer.loadUnaligned(fromByteOffset: position, as: UInt16.self)
        position &+= 2
        return UInt16(littleEndian: value)
    }

    /// Reads four bytes, least significant first.
    mutating func readUInt32LE(_ field: StaticString) throws(LogFormatError) -> UInt32 {
        try require(4, for: field)
        let value = buffer.loadUnaligned(fromByteOffset: position, as: UInt32.self)
        position &+= 4
        return UInt32(littleEndian: value)
    }

    /// Reads eight bytes, least significant first.
    mutating func readUInt64LE(_ field: StaticString) throws(LogFormatError) -> UInt64 {
        try require(8, for: field)
        let value = buffer.loadUnaligned(fromByteOffset: position, as: UInt64.self)
        position &+= 8
        return UInt64(littleEndian: value)
    }

    /// Reads the 16 bytes of a UUID in RFC 4122 order.
    mutating func readUUID(_ field: StaticString) throws(LogFormatError) -> LogUUID {
        try require(16, for: field)
        let high = buffer.loadUnaligned(fromByteOffset: position, as: UInt64.self)
        let low = buffer.loadUnaligned(fromByteOffset: position &+ 8, as: UInt64.self)
        position &+= 16
        return LogUUID(high: UInt64(bigEndian: high), low: UInt64(bigEndian: low))
    }

    // MARK: Varints

    /// Reads an unsigned LEB128 varint of at most 10 bytes, in its shortest form.
    @inline(__always)
    mutating func readVarUInt(_ field: StaticString) throws(LogFormatError) -> UInt64 {
        // Most varints in a payload (tags, indices, counts, small keys) are a single byte.
        if position < buffer.count {
            let first = buffer[position]
            if first < 0x80 {
                position &+= 1
                return UInt64(first)
            }
        }
        return try readMultiByteVarUInt(field)
    }

    private mutating func readMultiByteVarUInt(_ field: StaticString) throws(LogFormatError) -> UInt64 {
        // Two or three bytes in their shortest form (keys and lengths below 2^21: most of a replay's multi-byte
        // varints) when three bytes are at hand, without the loop's checks; anything else goes through the loop,
        // which also finds what is wrong. `readVarUInt` calls this with a first byte of 0x80 or more.
        if position &+ 3 <= buffer.count {
            let low = UInt64(buffer[position] & 0x7F)
            let second = buffer[position &+ 1]
            if second < 0x80 {
                if second != 0 {
                    position &+= 2
                    return low | UInt64(second) << 7
                }
            } else {
                let third = buffer[position &+ 2]
                if third != 0 && third < 0x80 {
                    position &+= 3
                    return low | UInt64(second & 0x7F) << 7 | UInt64(third) << 14
                }
            }
        }
        // A varint that may continue into the next segment: make its longest possible form contiguous first.
        if segments != nil, buffer.count &- position < 10, remainingByteCount > buffer.count &- position {
            try gather(min(10, remainingByteCount), for: field)
        }
        let start = offset
        var index = position
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard index < buffer.count else { throw truncated(field, needing: index &- position &+ 1, at: start) }
            let byte = buffer[index]
            index &+= 1
            // The tenth byte holds bit 63 only; anything more is overflow or an eleventh byte.
            if shift == 63 && byte > 1 {
                throw malformed("the varint for \(field) is longer than 10 bytes or overflows 64 bits", at: start)
            }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 {
                // A final zero group after others means the same value had a shorter encoding.
                if byte == 0 && index &- position > 1 {
                    throw malformed("the varint for \(field) is not in its shortest form", at: start)
                }
                position = index
                return result
            }
            shift &+= 7
        }
    }

    /// Reads a zigzag-mapped signed varint.
    mutating func readVarInt(_ field: StaticString) throws(LogFormatError) -> Int64 {
        let raw = try readVarUInt(field)
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// Reads an unsigned varint that must fit in a `UInt32`.
    mutating func readVarUInt32(_ field: StaticString) throws(LogFormatError) -> UInt32 {
        let start = offset
        let raw = try readVarUInt(field)
        guard let value = UInt32(exactly: raw) else {
            throw malformed("\(field) is \(raw), more than the largest 32-bit value", at: start)
        }
        return value
    }

    /// Reads an unsigned varint that must be less than `limit`.
    @inline(__always)
    mutating func readIndex(_ field: StaticString, below limit: Int) throws(LogFormatError) -> UInt32 {
        let start = offset
        let raw = try readVarUInt(field)
        guard raw < UInt64(limit) else { throw indexError(field, raw, limit, at: start) }
        return UInt32(truncatingIfNeeded: raw)
    }

    /// The error of an index not less than its limit (out of line: every property and entity index of a payload is
    /// read through ``readIndex(_:below:)``, whose fast path is inlined).
    @inline(never)
    private func indexError(_ field: StaticString, _ raw: UInt64, _ limit: Int, at start: Int) -> LogFormatError {
        malformed("\(field) is \(raw), not less than \(limit)", at: start)
    }

    // MARK: Lengths and counts

    /// Reads the element count of a list, checked before anything is allocated.
    ///
    /// - Parameters:
    ///   - limit: the largest count allowed (a limit from ``LogLimits``).
    ///   - minimumElementByteCount: the fewest bytes one element can take; `count × minimumElementByteCount`
    ///     must not exceed the bytes that remain.
    mutating func readCount(
        _ field: StaticString, limit: Int = LogLimits.maxElementCount, minimumElementByteCount: Int = 1
    ) throws(LogFormatError) -> Int {
        let start = offset
        let raw = try readVarUInt(field)
        guard raw <= UInt64(limit) else {
            throw malformed("\(field) is \(raw), more than the limit of \(limit)", at: start)
        }
        let count = Int(raw)
        // `limit` and the element sizes are small, so the product cannot overflow.
        guard count &* minimumElementByteCount <= remainingByteCount else {
            throw malformed(
                "\(field) is \(count), but only \(remainingByteCount) bytes remain after it "
                    + "(each element needs at least \(minimumElementByteCount))",
                at: start)
        }
        return count
    }

    /// Reads a byte length (a varint at most `limit` that fits in the remaining bytes).
    private mutating func readByteLength(_ field: StaticString, limit: Int) throws(LogFormatError) -> Int {
        let start = offset
        let raw = try readVarUInt(field)
        guard raw <= UInt64(limit) else {
            throw malformed("the length of \(field) is \(raw) bytes, more than the limit of \(limit)", at: start)
        }
        guard raw <= UInt64(remainingByteCount) else {
            throw malformed(
                "the length of \(field) is \(raw) bytes, but only \(remainingByteCount) bytes remain after it",
                at: start)
        }
        return Int(raw)
    }

    // MARK: Byte strings

    /// Reads `count` raw bytes.
    mutating func readBytes(count: Int, _ field: StaticString) throws(LogFormatError) -> [UInt8] {
        precondition(count >= 0, "a byte count cannot be negative")
        if count > buffer.count &- position, segments != nil { return try readBytesAcrossSegments(count, field) }
        try require(count, for: field)
        let source = UnsafeRawBufferPointer(rebasing: buffer[position..<(position &+ count)])
        let value = [UInt8](uninitializedCount: count) { destination, initializedCount in
            UnsafeMutableRawBufferPointer(destination).copyMemory(from: source)
            initializedCount = count
        }
        position &+= count
        return value
    }

    /// Reads `count` bytes that continue past the current segment, copying segment by segment into the result (a
    /// large binary value is never gathered into one segment first, so it is held once).
    private mutating func readBytesAcrossSegments(_ count: Int, _ field: StaticString) throws(LogFormatError)
        -> [UInt8]
    {
        guard count <= remainingByteCount else { throw truncated(field, needing: count, at: offset) }
        var value: [UInt8] = []
        value.reserveCapacity(count)
        while value.count < count {
            if position == buffer.count { try gather(1, for: field) }
            let take = min(count &- value.count, buffer.count &- position)
            value.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[position..<(position &+ take)]))
            position &+= take
        }
        return value
    }

    /// Reads a varint length and that many bytes, at most ``LogLimits/maxBinaryByteCount``.
    mutating func readByteArray(_ field: StaticString) throws(LogFormatError) -> [UInt8] {
        let count = try readByteLength(field, limit: LogLimits.maxBinaryByteCount)
        return try readBytes(count: count, field)
    }

    /// Reads a varint length and that many bytes of valid UTF-8, at most ``LogLimits/maxStringByteCount``.
    mutating func readString(_ field: StaticString) throws(LogFormatError) -> String {
        var value = ""
        try withStringBytes(field) { bytes, _ in
            // Checked to be UTF-8 already: nothing is repaired.
            if bytes.count > 0 { value = String(decoding: bytes, as: UTF8.self) }
        }
        return value
    }

    /// Reads what ``readString(_:)`` reads and lends its bytes to `body` (valid only during the call) instead of
    /// making a `String`: a reader that copies them into its own storage checks them once and allocates nothing.
    /// `body` also learns whether every byte is ASCII, which the UTF-8 check found out (a reader that needs to know
    /// does not scan the bytes again).
    mutating func withStringBytes(_ field: StaticString, _ body: (UnsafeRawBufferPointer, _ isASCII: Bool) -> Void)
        throws(LogFormatError)
    {
        let lengthOffset = offset
        let count = try readByteLength(field, limit: LogLimits.maxStringByteCount)
        if count == 0 { return body(UnsafeRawBufferPointer(start: nil, count: 0), true) }
        try require(count, for: field)
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[position..<(position &+ count)])
        guard let encoding = Self.utf8Encoding(of: bytes) else {
            throw malformed("\(field) is not valid UTF-8", at: lengthOffset)
        }
        position &+= count
        body(bytes, encoding == .ascii)
    }

    /// Reads what ``readByteArray(_:)`` reads and lends its bytes to `body` (valid only during the call). A value
    /// that continues past the current segment of a segmented payload is copied once, as ``readByteArray(_:)`` does.
    mutating func withByteArrayBytes(_ field: StaticString, _ body: (UnsafeRawBufferPointer) -> Void)
        throws(LogFormatError)
    {
        let count = try readByteLength(field, limit: LogLimits.maxBinaryByteCount)
        if count > buffer.count &- position, segments != nil {
            return try readBytesAcrossSegments(count, field).withUnsafeBytes(body)
        }
        try require(count, for: field)
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[position..<(position &+ count)])
        position &+= count
        body(bytes)
    }
}
