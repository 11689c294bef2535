import CCRC32C

/// CRC32C (Castagnoli), hardware-accelerated with SSE4.2 where available.
public enum CRC32C {
    /// The CRC32C of `bytes`, continuing from `previous` (0 to start).
    ///
    /// `checksum(b, continuing: checksum(a))` equals the checksum of `a` followed by `b`.
    package static func checksum(_ bytes: UnsafeRawBufferPointer, continuing previous: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return previous }
        return eg_crc32c_extend(previous, base, bytes.count)
    }

    /// The CRC32C of an array of bytes, continuing from `previous`.
    package static func checksum(_ bytes: [UInt8], continuing previous: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0, continuing: previous) }
    }

    /// The same function through the portable table (for tests comparing both paths).
    package static func portableChecksum(_ bytes: [UInt8], continuing previous: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return previous }
            return eg_crc32c_extend_portable(previous, base, buffer.count)
        }
    }

    /// Whether the SSE4.2 instruction is in use on this CPU.
    public static var isHardwareAccelerated: Bool { eg_crc32c_is_hardware_accelerated() != 0 }
}
