/// Appends the primitive encodings of the payload format to a growing byte array.
///
/// Every multi-byte fixed-width integer is little-endian; variable-length integers are unsigned LEB128 (7 bits per
/// byte, least significant group first, high bit set on every byte but the last) and always take the fewest bytes
/// possible, so every value has exactly one encoding. Signed integers are zigzag-mapped first. See
/// `Docs/FileFormat-Payloads.md` for the normative description.
///
/// Writing never fails for fixed-size values; a string, byte array or element count larger than its limit in
/// ``LogLimits`` throws ``LogFormatError/Code/limitExceeded``, because the reader would reject it.
struct ByteWriter {
    /// The bytes written so far.
    private(set) var bytes: [UInt8]

    /// Creates a writer with room for `reservedByteCount` bytes before it has to grow.
    init(reservedByteCount: Int = 256) {
        bytes = []
        bytes.reserveCapacity(reservedByteCount)
    }

    /// Creates a writer that writes into `array`'s storage (its bytes are dropped), taken from `arrays` (a rewrite's
    /// chunks reuse a few arrays), with room for `reservedByteCount` bytes before it has to grow.
    init(reservedByteCount: Int, from arrays: ByteArrayPool) {
        bytes = arrays.take(minimumCapacity: reservedByteCount)
    }

    /// The number of bytes written so far.
    var byteCount: Int { bytes.count }

    /// Appends one byte.
    mutating func writeUInt8(_ value: UInt8) {
        bytes.append(value)
    }

    /// Appends `false` as 0 and `true` as 1.
    mutating func writeBool(_ value: Bool) {
        bytes.append(value ? 1 : 0)
    }

    /// Appends an unsigned LEB128 varint: 1 byte below 128, at most 10 bytes.
    ///
    /// Inlined for the one-byte case (property indices, tags' lengths, short strings' byte counts): called out of
    /// line it was a tenth of a checkpoint chunk's encoding in h90's profile of compact-1m.
    @inline(__always)
    mutating func writeVarUInt(_ value: UInt64) {
        guard value >= 0x80 else {
            bytes.append(UInt8(truncatingIfNeeded: value))
            return
        }
        writeMultiByteVarUInt(value)
    }

    /// ``writeVarUInt(_:)`` of a value of 128 or more.
    @inline(never)
    private mutating func writeMultiByteVarUInt(_ value: UInt64) {
        var remaining = value
        while remaining >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: remaining) | 0x80)
            remaining >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: remaining))
    }

    /// Appends a signed integer as a zigzag-mapped varint, so that small magnitudes of either sign stay short.
    mutating func writeVarInt(_ value: Int64) {
        writeVarUInt(ByteWriter.zigzagEncoded(value))
    }

    /// Appends two bytes, least significant first.
    mutating func writeUInt16LE(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    /// Appends four bytes, least significant first.
    mutating func writeUInt32LE(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends eight bytes, least significant first.
    mutating func writeUInt64LE(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Writes `value` as a varint where one byte was reserved at `offset` (a count known only after what follows it
    /// was written): a value of 128 or more moves the bytes after the reservation up to make room.
    mutating func patchVarUInt(_ value: UInt64, reservedByteAt offset: Int) {
        precondition(offset < bytes.count, "byte \(offset) was reserved in \(bytes.count) bytes")
        guard value >= 0x80 else {
            bytes[offset] = UInt8(truncatingIfNeeded: value)
            return
        }
        var encoded = ByteWriter(reservedByteCount: 10)
        encoded.writeVarUInt(value)
        bytes.replaceSubrange(offset..<offset + 1, with: encoded.bytes)
    }

    /// Appends raw bytes without a length.
    mutating func writeBytes(_ value: some Collection<UInt8>) {
        bytes.append(contentsOf: value)
    }

    /// Appends the 16 bytes of a UUID in RFC 4122 order.
    mutating func writeUUID(_ value: LogUUID) {
        withUnsafeBytes(of: value.high.bigEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: value.low.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends a varint byte count followed by the string's UTF-8 bytes.
    ///
    /// - Throws: ``LogFormatError/Code/limitExceeded`` when the string is longer than
    ///   ``LogLimits/maxStringByteCount`` bytes.
    mutating func writeString(_ value: String, field: @autoclosure () -> String) throws(LogFormatError) {
        var value = value
        let byteCount = value.utf8.count
        guard byteCount <= LogLimits.maxStringByteCount else {
            throw LogFormatError(
                .limitExceeded,
                "\(field()) is \(byteCount) bytes of UTF-8, more than the limit of \(LogLimits.maxStringByteCount)")
        }
        writeVarUInt(UInt64(byteCount))
        // Native strings are contiguous UTF-8; bridged or foreign ones are made so once.
        value.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// Appends a varint byte count followed by the bytes.
    ///
    /// - Throws: ``LogFormatError/Code/limitExceeded`` when there are more than ``LogLimits/maxBinaryByteCount``
    ///   bytes.
    mutating func writeByteArray(_ value: [UInt8], field: @autoclosure () -> String) throws(LogFormatError) {
        guard value.count <= LogLimits.maxBinaryByteCount else {
            throw LogFormatError(
                .limitExceeded,
                "\(field()) is \(value.count) bytes, more than the limit of \(LogLimits.maxBinaryByteCount)")
        }
        writeVarUInt(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    /// Appends the element count of a list as a varint.
    ///
    /// - Throws: ``LogFormatError/Code/limitExceeded`` when `count` is larger than `limit`.
    mutating func writeCount(
        _ count: Int, limit: Int = LogLimits.maxElementCount, field: @autoclosure () -> String
    ) throws(LogFormatError) {
        guard count <= limit else {
            throw LogFormatError(.limitExceeded, "\(field()) has \(count) elements, more than the limit of \(limit)")
        }
        writeVarUInt(UInt64(count))
    }

    /// Maps a signed integer to an unsigned one so that 0, -1, 1, -2, 2, … become 0, 1, 2, 3, 4, ….
    static func zigzagEncoded(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }
}
