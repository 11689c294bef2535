// The UTF-8 check of a string's bytes, which also tells ASCII text apart (eight bytes at a time).

extension ByteReader {
    /// What valid UTF-8 text a string's bytes are (see ``utf8Encoding(of:)``).
    enum UTF8Encoding {
        /// Every byte is below 0x80.
        case ascii
        /// Valid UTF-8 with at least one byte of 0x80 or more.
        case nonASCII
    }

    /// Whether `bytes` are valid UTF-8 (`nil`: not) and whether they are ASCII, in one pass over an ASCII string:
    /// ASCII is checked eight bytes at a time without building anything.
    static func utf8Encoding(of bytes: UnsafeRawBufferPointer) -> UTF8Encoding? {
        let count = bytes.count
        var high: UInt64 = 0
        if count >= 8 {
            for index in 0..<count / 8 { high |= bytes.loadUnaligned(fromByteOffset: index &* 8, as: UInt64.self) }
            // The last bytes in one word that overlaps the words before them, not one at a time (a byte loop took a
            // third of this check's time in a replay of the demo log, whose strings are mostly short).
            high |= bytes.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
        } else {
            for index in 0..<count { high |= UInt64(bytes[index]) }
        }
        if high & 0x8080_8080_8080_8080 == 0 { return .ascii }
        return String(validating: bytes, as: UTF8.self) != nil ? .nonASCII : nil
    }
}
