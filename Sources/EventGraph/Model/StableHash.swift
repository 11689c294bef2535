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
