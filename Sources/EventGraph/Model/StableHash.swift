/// Hashes that are equal on every platform and in every run (unlike Swift's seeded `Hasher`).
enum StableHash {
    /// 64-bit FNV-1a.
    static func fnv1a64<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }
}

/// 128-bit FNV-1a, fed incrementally (used for the state digest).
struct StableHasher128 {
    private var hash: UInt128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d
    private static let prime: UInt128 = 0x0000_0000_0100_0000_0000_0000_0000_013B

    mutating func combine<Bytes: Sequence<UInt8>>(bytes: Bytes) {
        for byte in bytes {
            hash ^= UInt128(byte)
            hash &*= Self.prime
        }
    }

    mutating func combine(_ value: UInt64) {
        var value = value
        for _ in 0..<8 {
            hash ^= UInt128(value & 0xFF)
            hash &*= Self.prime
            value >>= 8
        }
    }

    mutating func combine(_ string: String) {
        combine(UInt64(string.utf8.count))
        combine(bytes: string.utf8)
    }

    /// The 16 bytes of the digest, most significant first.
    var bytes: [UInt8] {
        (0..<16).map { UInt8(truncatingIfNeeded: hash >> (120 - 8 * UInt128($0))) }
    }
}
