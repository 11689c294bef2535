import Testing

@testable import LogFormat

/// Reads `bytes` with a fresh reader and runs `body` on it.
private func read<T>(
    _ bytes: [UInt8], _ body: (inout ByteReader) throws(LogFormatError) -> T
) throws(LogFormatError) -> T {
    try ByteReader.withReader(over: bytes, body)
}

@Suite("Byte coding")
struct ByteCodingTests {
    @Suite("Varints")
    struct Varints {
        static let unsignedCases: [(UInt64, [UInt8])] = [
            (0, [0x00]),
            (1, [0x01]),
            (127, [0x7F]),
            (128, [0x80, 0x01]),
            (300, [0xAC, 0x02]),
            (16_383, [0xFF, 0x7F]),
            (16_384, [0x80, 0x80, 0x01]),
            (2_097_151, [0xFF, 0xFF, 0x7F]),
            (2_097_152, [0x80, 0x80, 0x80, 0x01]),
            (UInt64(UInt32.max), [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]),
            (UInt64.max, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]),
        ]

        static let zigzagCases: [(Int64, UInt64)] = [
            (0, 0), (-1, 1), (1, 2), (-2, 3), (2, 4), (-64, 127), (64, 128), (.max, .max - 1), (.min, .max),
        ]

        static let malformedCases: [([UInt8], String)] = [
            ([0x80], "ends"),
            ([0xFF, 0xFF, 0xFF], "ends"),
            ([0x80, 0x00], "shortest form"),
            ([0xFF, 0x80, 0x00], "shortest form"),
            // The same with bytes after them: two- and three-byte varints then take a shorter path.
            ([0x80, 0x00, 0x05, 0x05], "shortest form"),
            ([0xFF, 0x80, 0x00, 0x05], "shortest form"),
            ([0xFF, 0xFF, 0x80, 0x00, 0x05], "shortest form"),
            ([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02], "overflows"),
            ([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x81, 0x00], "longer than 10 bytes"),
            ([UInt8](repeating: 0x80, count: 11) + [0x01], "longer than 10 bytes"),
        ]

        @Test("unsigned varints have the LEB128 bytes", arguments: unsignedCases)
        func unsignedBytes(value: UInt64, expected: [UInt8]) throws {
            var writer = ByteWriter()
            writer.writeVarUInt(value)
            #expect(writer.bytes == expected)
            let decoded = try read(expected) { (reader) throws(LogFormatError) in
                let value = try reader.readVarUInt("value")
                #expect(reader.isAtEnd)
                return value
            }
            #expect(decoded == value)
        }

        @Test("unsigned varints followed by more bytes are read to their end", arguments: unsignedCases)
        func unsignedBytesFollowedByMore(value: UInt64, expected: [UInt8]) throws {
            let (decoded, next) = try read(expected + [0xAA, 0x55]) { (reader) throws(LogFormatError) in
                (try reader.readVarUInt("value"), try reader.readUInt8("next"))
            }
            #expect(decoded == value)
            #expect(next == 0xAA)
        }

        @Test("signed varints are zigzag mapped", arguments: zigzagCases)
        func zigzag(value: Int64, mapped: UInt64) throws {
            #expect(ByteWriter.zigzagEncoded(value) == mapped)
            var writer = ByteWriter()
            writer.writeVarInt(value)
            let decoded = try read(writer.bytes) { (reader) throws(LogFormatError) in try reader.readVarInt("value") }
            #expect(decoded == value)
        }

        @Test("malformed varints are rejected", arguments: malformedCases)
        func malformed(bytes: [UInt8], messageFragment: String) {
            let error = #expect(throws: LogFormatError.self) {
                try read([0x05] + bytes) { (reader) throws(LogFormatError) in
                    _ = try reader.readUInt8("prefix")
                    return try reader.readVarUInt("the value")
                }
            }
            #expect(error?.code == .malformedPayload)
            #expect(error?.byteOffset == 1, "the error points at the start of the varint")
            #expect(error?.message.contains(messageFragment) == true, "\(error?.message ?? "")")
        }

        @Test("a 32-bit varint above UInt32.max is rejected")
        func narrowOverflow() {
            var writer = ByteWriter()
            writer.writeVarUInt(UInt64(UInt32.max) + 1)
            #expect(throws: LogFormatError.self) {
                try read(writer.bytes) { (reader) throws(LogFormatError) in try reader.readVarUInt32("index") }
            }
        }

        @Test("an index is read below its limit, and one at or above it is rejected where it starts")
        func indexBelowLimit() throws {
            let below = try read([0x05, 0xC7, 0x01]) { (reader) throws(LogFormatError) in
                _ = try reader.readUInt8("prefix")
                return try reader.readIndex("the index", below: 200)
            }
            #expect(below == 199)
            let error = #expect(throws: LogFormatError.self) {
                try read([0x05, 0xC8, 0x01]) { (reader) throws(LogFormatError) in
                    _ = try reader.readUInt8("prefix")
                    return try reader.readIndex("the index", below: 200)
                }
            }
            #expect(error?.code == .malformedPayload)
            #expect(error?.byteOffset == 1, "the error points at the start of the index")
            #expect(error?.message.contains("the index is 200, not less than 200") == true, "\(error?.message ?? "")")
        }
    }

    @Suite("Fixed-width values")
    struct FixedWidth {
        @Test("integers are little-endian")
        func littleEndian() throws {
            var writer = ByteWriter()
            writer.writeUInt16LE(0x0102)
            writer.writeUInt32LE(0x0304_0506)
            writer.writeUInt64LE(0x0708_090A_0B0C_0D0E)
            writer.writeBool(true)
            writer.writeBool(false)
            #expect(writer.bytes == [2, 1, 6, 5, 4, 3, 0x0E, 0x0D, 0x0C, 0x0B, 0x0A, 9, 8, 7, 1, 0])
            try read(writer.bytes) { (reader) throws(LogFormatError) in
                #expect(try reader.readUInt16LE("a") == 0x0102)
                #expect(try reader.readUInt32LE("b") == 0x0304_0506)
                #expect(try reader.readUInt64LE("c") == 0x0708_090A_0B0C_0D0E)
                #expect(try reader.readBool("d") == true)
                #expect(try reader.readBool("e") == false)
                #expect(reader.isAtEnd)
            }
        }

        @Test("UUIDs are 16 bytes in RFC 4122 order")
        func uuid() throws {
            let uuid = try #require(LogUUID(string: "00112233-4455-6677-8899-AABBCCDDEEFF"))
            var writer = ByteWriter()
            writer.writeUUID(uuid)
            #expect(writer.bytes == uuid.bytes)
            #expect(try read(writer.bytes) { (reader) throws(LogFormatError) in try reader.readUUID("u") } == uuid)
        }

        @Test("a Boolean byte other than 0 or 1 is rejected")
        func badBool() {
            let error = #expect(throws: LogFormatError.self) {
                try read([2]) { (reader) throws(LogFormatError) in try reader.readBool("flag") }
            }
            #expect(error?.code == .malformedPayload)
        }

        @Test("reading past the end throws with the offset", arguments: [1, 2, 4, 8, 16])
        func truncated(byteCount: Int) {
            let bytes = [UInt8](repeating: 0xAA, count: byteCount - 1)
            let error = #expect(throws: LogFormatError.self) {
                try read(bytes) { (reader) throws(LogFormatError) in
                    switch byteCount {
                    case 1: _ = try reader.readUInt8("x")
                    case 2: _ = try reader.readUInt16LE("x")
                    case 4: _ = try reader.readUInt32LE("x")
                    case 8: _ = try reader.readUInt64LE("x")
                    default: _ = try reader.readUUID("x")
                    }
                }
            }
            #expect(error?.code == .malformedPayload)
            #expect(error?.byteOffset == 0)
        }
    }

    @Suite("Strings and byte arrays")
    struct Strings {
        @Test("strings round trip", arguments: ["", "a", "é", "日本語", "𝄞🇫🇷", String(repeating: "x", count: 200)])
        func roundTrip(string: String) throws {
            var writer = ByteWriter()
            try writer.writeString(string, field: "s")
            #expect(writer.bytes.count > string.utf8.count)
            let decoded = try read(writer.bytes) { (reader) throws(LogFormatError) in
                let value = try reader.readString("s")
                #expect(reader.isAtEnd)
                return value
            }
            #expect(decoded == string)
        }

        static let invalidUTF8Cases: [[UInt8]] = [
            [0xFF], [0xC3], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x61, 0x80],
        ]

        @Test("invalid UTF-8 is rejected", arguments: invalidUTF8Cases)
        func invalidUTF8(bytes: [UInt8]) {
            let error = #expect(throws: LogFormatError.self) {
                try read([UInt8(bytes.count)] + bytes) { (reader) throws(LogFormatError) in try reader.readString("s") }
            }
            #expect(error?.code == .malformedPayload)
            #expect(error?.message.contains("UTF-8") == true)
        }

        @Test("a string's bytes are ASCII, other valid UTF-8 or invalid wherever its one non-ASCII byte sits")
        func asciiCheckAtEveryPosition() {
            for count in 0...40 {
                let ascii = [UInt8](repeating: 0x61, count: count)
                #expect(ascii.withUnsafeBytes { ByteReader.utf8Encoding(of: $0) } == .ascii, "\(count) bytes")
                for position in 0..<count {
                    var invalid = ascii
                    invalid[position] = 0xFF
                    #expect(invalid.withUnsafeBytes { ByteReader.utf8Encoding(of: $0) } == nil, "0xFF at \(position)")
                    guard position + 1 < count else { continue }
                    var accented = ascii
                    accented[position] = 0xC3
                    accented[position + 1] = 0xA9
                    #expect(
                        accented.withUnsafeBytes { ByteReader.utf8Encoding(of: $0) } == .nonASCII,
                        "é at \(position) of \(count)")
                }
            }
        }

        @Test("byte arrays round trip", arguments: [0, 1, 127, 128, 70_000])
        func byteArrays(count: Int) throws {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            var writer = ByteWriter()
            try writer.writeByteArray(bytes, field: "b")
            #expect(
                try read(writer.bytes) { (reader) throws(LogFormatError) in try reader.readByteArray("b") } == bytes)
        }

        @Test("a length beyond the limit or the remaining bytes throws before allocating")
        func hugeLength() {
            for length in [UInt64(LogLimits.maxStringByteCount) + 1, UInt64.max, 1 << 40, 4] {
                var writer = ByteWriter()
                writer.writeVarUInt(length)
                writer.writeBytes([0x61, 0x62, 0x63])
                #expect(throws: LogFormatError.self) {
                    try read(writer.bytes) { (reader) throws(LogFormatError) in try reader.readString("s") }
                }
                #expect(throws: LogFormatError.self) {
                    try read(writer.bytes) { (reader) throws(LogFormatError) in try reader.readByteArray("b") }
                }
            }
        }

        @Test("a string over the limit is not written")
        func writeLimit() {
            let big = String(repeating: "a", count: LogLimits.maxStringByteCount + 1)
            var writer = ByteWriter()
            let error = #expect(throws: LogFormatError.self) { try writer.writeString(big, field: "the name") }
            #expect(error?.code == .limitExceeded)
            #expect(writer.byteCount == 0)
        }
    }

    @Suite("Counts")
    struct Counts {
        @Test("a count needs enough remaining bytes for its elements")
        func remainingBytes() throws {
            // 3 elements of at least 2 bytes need 6 bytes; 5 remain.
            let error = #expect(throws: LogFormatError.self) {
                try read([3, 0, 0, 0, 0, 0]) { (reader) throws(LogFormatError) in
                    try reader.readCount("the number of things", minimumElementByteCount: 2)
                }
            }
            #expect(error?.byteOffset == 0)
            let count = try read([3, 0, 0, 0, 0, 0, 0]) { (reader) throws(LogFormatError) in
                try reader.readCount("the number of things", minimumElementByteCount: 2)
            }
            #expect(count == 3)
        }

        @Test("a count over its limit is rejected", arguments: [UInt64(LogLimits.maxElementCount) + 1, .max])
        func overLimit(count: UInt64) {
            var writer = ByteWriter()
            writer.writeVarUInt(count)
            let error = #expect(throws: LogFormatError.self) {
                try read(writer.bytes) { (reader) throws(LogFormatError) in try reader.readCount("n") }
            }
            #expect(error?.message.contains("limit") == true)
        }

        @Test("writing a count over its limit throws limitExceeded")
        func writeOverLimit() {
            var writer = ByteWriter()
            let error = #expect(throws: LogFormatError.self) {
                try writer.writeCount(11, limit: 10, field: "the list")
            }
            #expect(error?.code == .limitExceeded)
        }
    }
}
