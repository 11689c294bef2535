/// The 48-byte header in front of every frame body. See `Docs/FileFormat.md` for the byte layout.
///
/// Both checksums are CRC32C seeded with the file's ``LogFileHeader/checksumSeed``, so a frame copied from another
/// file (or an older generation of the same store) never verifies.
package struct FrameHeader: Hashable, Sendable {
    /// Size of the encoded header.
    package static let byteCount = 48
    /// Frames start at multiples of this.
    package static let alignment = 8

    /// Length of the stored body (after compression), excluding padding.
    package var bodyByteCount: UInt32
    /// The frame's type.
    package var type: FrameType
    /// How the body is stored (raw or LZ4).
    package var codec: FrameCodec
    /// Physical sequence number: the previous frame's plus one.
    package var sequence: UInt64
    /// How far (byte offset) the file was known to be durable when this frame was written.
    package var durableWatermark: UInt64
    /// The transaction a transaction, fragment or blob frame belongs to; 0 for other frames.
    package var transactionID: UInt64
    /// Length of the payload after decompression (equals ``bodyByteCount`` for raw frames).
    package var rawByteCount: UInt32
    /// CRC32C of the stored body, seeded with the file's checksum seed.
    package var bodyChecksum: UInt32
    /// For fragments, the fragment's position (0-based); for blobs, the blob's index in its transaction.
    package var partIndex: UInt32

    /// Creates a header from its fields.
    package init(
        bodyByteCount: UInt32, type: FrameType, codec: FrameCodec, sequence: UInt64, durableWatermark: UInt64,
        transactionID: UInt64, rawByteCount: UInt32, bodyChecksum: UInt32, partIndex: UInt32
    ) {
        self.bodyByteCount = bodyByteCount
        self.type = type
        self.codec = codec
        self.sequence = sequence
        self.durableWatermark = durableWatermark
        self.transactionID = transactionID
        self.rawByteCount = rawByteCount
        self.bodyChecksum = bodyChecksum
        self.partIndex = partIndex
    }

    /// Total bytes the frame occupies on disk: header, body and padding to the next 8-byte boundary.
    package var frameByteCount: UInt64 { Self.frameByteCount(bodyByteCount: Int(bodyByteCount)) }

    static func frameByteCount(bodyByteCount: Int) -> UInt64 {
        UInt64(byteCount + (bodyByteCount + alignment - 1) / alignment * alignment)
    }

    /// Writes the header into 48 bytes at the start of `out`, computing the header checksum.
    func encode(into out: UnsafeMutableRawBufferPointer, seed: UInt32) {
        out.storeLE(bodyByteCount, at: 0)
        out[4] = type.rawValue
        out[5] = codec.rawValue
        out.storeLE(UInt16(0), at: 6)
        out.storeLE(sequence, at: 8)
        out.storeLE(durableWatermark, at: 16)
        out.storeLE(transactionID, at: 24)
        out.storeLE(rawByteCount, at: 32)
        out.storeLE(bodyChecksum, at: 36)
        out.storeLE(partIndex, at: 40)
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: out[0..<44]), continuing: seed)
        out.storeLE(crc, at: 44)
    }

    /// Why a frame header failed to decode.
    enum Failure: Error, Equatable {
        case checksum
        case unknownCodec(UInt8)
        case reservedBitsSet
        case limit(String)

        var reason: String {
            switch self {
            case .checksum: "frame header checksum mismatch"
            case .unknownCodec(let value): "unknown codec \(value) in frame header"
            case .reservedBitsSet: "reserved frame header bytes are not zero"
            case .limit(let what): what
            }
        }
    }

    /// Decodes and checks a header: checksum, codec, reserved bytes, size limits and the sequence number's range.
    static func decode(_ bytes: UnsafeRawBufferPointer, seed: UInt32) -> Result<FrameHeader, Failure> {
        precondition(bytes.count >= byteCount, "a frame header needs \(byteCount) bytes")
        let stored = bytes.loadLE(UInt32.self, at: 44)
        guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<44]), continuing: seed) == stored else {
            return .failure(.checksum)
        }
        guard let codec = FrameCodec(rawValue: bytes[5]) else { return .failure(.unknownCodec(bytes[5])) }
        guard bytes.loadLE(UInt16.self, at: 6) == 0 else { return .failure(.reservedBitsSet) }
        let header = FrameHeader(
            bodyByteCount: bytes.loadLE(UInt32.self, at: 0), type: FrameType(rawValue: bytes[4]), codec: codec,
            sequence: bytes.loadLE(UInt64.self, at: 8), durableWatermark: bytes.loadLE(UInt64.self, at: 16),
            transactionID: bytes.loadLE(UInt64.self, at: 24), rawByteCount: bytes.loadLE(UInt32.self, at: 32),
            bodyChecksum: bytes.loadLE(UInt32.self, at: 36), partIndex: bytes.loadLE(UInt32.self, at: 40))
        guard header.bodyByteCount <= LogLimits.maxFrameBodyByteCount else {
            return .failure(.limit("frame body of \(header.bodyByteCount) bytes exceeds the limit"))
        }
        guard header.rawByteCount <= LogLimits.maxFrameRawByteCount else {
            return .failure(.limit("frame raw length of \(header.rawByteCount) bytes exceeds the limit"))
        }
        // Every frame has a successor's sequence number to hand on; the largest one could only overflow.
        guard header.sequence < UInt64.max else {
            return .failure(.limit("frame sequence number \(header.sequence) leaves no successor"))
        }
        if codec == .raw, header.rawByteCount != header.bodyByteCount {
            return .failure(.limit("raw frame with raw length \(header.rawByteCount) ≠ body \(header.bodyByteCount)"))
        }
        return .success(header)
    }
}
