/// A 128-bit UUID as the log stores it: 16 bytes, compared and printed like RFC 4122 UUIDs.
///
/// LogFormat imports no Foundation, so it carries its own UUID value; EventGraph converts to `Foundation.UUID`
/// with ``bytes`` and ``init(bytes:)``.
public struct LogUUID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The most significant 8 bytes, big-endian.
    public var high: UInt64
    /// The least significant 8 bytes, big-endian.
    public var low: UInt64

    /// Creates a UUID from its two halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Creates a UUID from 16 bytes in RFC 4122 order. Precondition: `bytes.count == 16`.
    public init<Bytes: Collection<UInt8>>(bytes: Bytes) {
        precondition(bytes.count == 16, "a UUID has 16 bytes, got \(bytes.count)")
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, byte) in bytes.enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.init(high: high, low: low)
    }

    /// A random (version 4) UUID.
    public static func random() -> LogUUID {
        var generator = SystemRandomNumberGenerator()
        let high = (generator.next() & ~UInt64(0xF000)) | 0x4000  // version 4
        let low = (generator.next() & ~(UInt64(0xC0) << 56)) | (UInt64(0x80) << 56)  // RFC 4122 variant
        return LogUUID(high: high, low: low)
    }

    /// The all-zero UUID.
    public static let zero = LogUUID(high: 0, low: 0)

    /// The 16 bytes in RFC 4122 order.
    public var bytes: [UInt8] {
        (0..<16).map { index in
            index < 8
                ? UInt8(truncatingIfNeeded: high >> (56 - 8 * index))
                : UInt8(truncatingIfNeeded: low >> (56 - 8 * (index - 8)))
        }
    }

    /// Parses the canonical 36-character form (`8-4-4-4-12` hex digits), case-insensitive.
    public init?(string: String) {
        let hex = string.utf8.filter { $0 != UInt8(ascii: "-") }
        guard string.utf8.count == 36, hex.count == 32 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        var iterator = hex.makeIterator()
        while let first = iterator.next(), let second = iterator.next() {
            guard let a = LogUUID.hexValue(first), let b = LogUUID.hexValue(second) else { return nil }
            bytes.append(a << 4 | b)
        }
        self.init(bytes: bytes)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The canonical upper-case form, e.g. `E621E1F8-C36C-495A-93FC-0C247A3E6E5F`.
    public var description: String {
        let digits: [UInt8] = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { out.append(UInt8(ascii: "-")) }
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func < (lhs: LogUUID, rhs: LogUUID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}
