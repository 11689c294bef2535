/// The header at the start of every log file, stored twice (at byte 0 and byte 512) so that one damaged copy
/// is recoverable from the other. See `Docs/FileFormat.md` for the byte layout.
package struct LogFileHeader: Hashable, Sendable {
    /// The format's major version: a reader refuses a file with a greater one.
    package static let currentMajorVersion: UInt16 = 1
    /// The format's minor version: additions an older reader of the same major version can ignore.
    ///
    /// 1.1 records ``maxTransactionByteCount`` in bytes that 1.0 reserved (and 1.0 readers ignore). 1.2 splits a
    /// checkpoint chunk larger than a frame over checkpoint-chunk-first/-middle/-last frames (0x23–0x25); a 1.1
    /// reader refuses those frames as written by a newer version (*unsupported feature*), and reads every other
    /// 1.2 file as before. 1.3 adds entity chunks and the checkpoint directory (0x26, 0x27); 1.4 adds index chunks
    /// (0x28) that a directory of payload version 2 lists (`Docs/FileFormat-Checkpoints.md`).
    package static let currentMinorVersion: UInt16 = 4
    /// Incompatible features this reader understands (none are defined in version 1.0).
    package static let knownIncompatibleFeatures: UInt64 = 0
    /// The magic bytes: 0x89 "EGLOG" CR LF (a high byte and a line ending catch text-mode corruption).
    package static let magic: [UInt8] = [0x89, 0x45, 0x47, 0x4C, 0x4F, 0x47, 0x0D, 0x0A]
    /// Size of one header copy.
    package static let copyByteCount = 128
    /// Byte offset of the second copy (a different disk sector from the first).
    package static let secondCopyByteOffset = 512
    /// Byte offset of the first frame.
    package static let framesByteOffset: UInt64 = 1024

    /// The format major version that wrote the file.
    package var majorVersion: UInt16
    /// The format minor version that wrote the file.
    package var minorVersion: UInt16
    /// Features a reader must understand to read the file.
    package var incompatibleFeatures: UInt64
    /// Features a reader may ignore.
    package var compatibleFeatures: UInt64
    /// The store's identity forever (cross-store references name it); kept across compactions.
    package var storeUUID: LogUUID
    /// The identity of this physical file; seeds every frame checksum, so frames from another file are rejected.
    package var fileUUID: LogUUID
    /// How many times the store has been rewritten (compacted).
    package var generation: UInt64
    /// The sequence number of the first frame.
    package var baseSequence: UInt64
    /// When the file was created, in microseconds since 1970.
    package var createdMicroseconds: Int64
    /// The largest transaction (changeset payload) the file may hold, chosen by the writer that created it; 0 in
    /// files written before format 1.1, which are bound by ``LogLimits/maxTransactionByteCount``.
    ///
    /// A reader knows this bound before it reads a transaction, and rejects a transaction whose fragments add up
    /// to more as soon as they do.
    package var maxTransactionByteCount: UInt32

    /// Creates a header for a new file of the current version.
    package init(
        storeUUID: LogUUID, fileUUID: LogUUID = .random(), generation: UInt64 = 0, baseSequence: UInt64 = 1,
        createdMicroseconds: Int64 = SystemClock.nowMicroseconds(),
        maxTransactionByteCount: Int = LogLimits.maxTransactionByteCount
    ) {
        precondition(
            (1...LogLimits.maxTransactionByteCount).contains(maxTransactionByteCount),
            "a transaction limit must be between 1 and \(LogLimits.maxTransactionByteCount) bytes")
        self.majorVersion = Self.currentMajorVersion
        self.minorVersion = Self.currentMinorVersion
        self.incompatibleFeatures = 0
        self.compatibleFeatures = 0
        self.storeUUID = storeUUID
        self.fileUUID = fileUUID
        self.generation = generation
        self.baseSequence = baseSequence
        self.createdMicroseconds = createdMicroseconds
        self.maxTransactionByteCount = UInt32(maxTransactionByteCount)
    }

    /// The largest transaction a reader accepts from this file: the recorded limit, or the format's for files
    /// that record none.
    package var transactionByteLimit: Int {
        maxTransactionByteCount == 0 ? LogLimits.maxTransactionByteCount : Int(maxTransactionByteCount)
    }

    /// The checksum seed of every frame in this file: CRC32C of the file UUID's 16 bytes.
    package var checksumSeed: UInt32 { CRC32C.checksum(fileUUID.bytes) }

    /// One encoded copy (128 bytes, the last 4 a CRC32C of the first 124).
    package func encodedCopy() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Self.copyByteCount)
        bytes.withUnsafeMutableBytes { out in
            for (index, byte) in Self.magic.enumerated() { out[index] = byte }
            out.storeLE(majorVersion, at: 8)
            out.storeLE(minorVersion, at: 10)
            out.storeLE(UInt32(Self.copyByteCount), at: 12)
            out.storeLE(incompatibleFeatures, at: 16)
            out.storeLE(compatibleFeatures, at: 24)
            for (index, byte) in storeUUID.bytes.enumerated() { out[32 + index] = byte }
            for (index, byte) in fileUUID.bytes.enumerated() { out[48 + index] = byte }
            out.storeLE(generation, at: 64)
            out.storeLE(baseSequence, at: 72)
            out.storeLE(createdMicroseconds, at: 80)
            out.storeLE(maxTransactionByteCount, at: 88)
            let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: out[0..<124]))
            out.storeLE(crc, at: 124)
        }
        return bytes
    }

    /// The bytes of the whole header region: copy, zero padding, copy, zero padding up to the first frame.
    package func encodedRegion() -> [UInt8] {
        var region = [UInt8](repeating: 0, count: Int(Self.framesByteOffset))
        let copy = encodedCopy()
        region.replaceSubrange(0..<Self.copyByteCount, with: copy)
        region.replaceSubrange(Self.secondCopyByteOffset..<Self.secondCopyByteOffset + Self.copyByteCount, with: copy)
        return region
    }

    /// The outcome of decoding one copy.
    enum CopyResult {
        case valid(LogFileHeader)
        case badMagic
        case badChecksum
        /// The checksum verifies but a field is out of range: a writer never produced it.
        case outOfRange(String, byteOffset: Int)
    }

    /// Decodes one 128-byte copy without judging versions or features.
    static func decodeCopy(_ bytes: UnsafeRawBufferPointer) -> CopyResult {
        guard bytes.count >= copyByteCount else { return .badMagic }
        for (index, byte) in magic.enumerated() where bytes[index] != byte { return .badMagic }
        let stored = bytes.loadLE(UInt32.self, at: 124)
        guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<124])) == stored else { return .badChecksum }
        var header = LogFileHeader(storeUUID: .zero, fileUUID: .zero, createdMicroseconds: 0)
        header.majorVersion = bytes.loadLE(UInt16.self, at: 8)
        header.minorVersion = bytes.loadLE(UInt16.self, at: 10)
        header.incompatibleFeatures = bytes.loadLE(UInt64.self, at: 16)
        header.compatibleFeatures = bytes.loadLE(UInt64.self, at: 24)
        header.storeUUID = LogUUID(bytes: UnsafeRawBufferPointer(rebasing: bytes[32..<48]))
        header.fileUUID = LogUUID(bytes: UnsafeRawBufferPointer(rebasing: bytes[48..<64]))
        header.generation = bytes.loadLE(UInt64.self, at: 64)
        header.baseSequence = bytes.loadLE(UInt64.self, at: 72)
        header.createdMicroseconds = bytes.loadLE(Int64.self, at: 80)
        header.maxTransactionByteCount = bytes.loadLE(UInt32.self, at: 88)
        if let (reason, offset) = outOfRangeField(header, bytes) { return .outOfRange(reason, byteOffset: offset) }
        return .valid(header)
    }

    /// Decodes the header region (at least the first 640 bytes of the file), using whichever copy verifies,
    /// and refuses newer major versions and unknown incompatible features.
    ///
    /// - Returns: the header and whether one of the copies was damaged (worth a warning, not an error).
    static func decode(region: UnsafeRawBufferPointer, path: String) throws(LogFormatError) -> (LogFileHeader, Bool) {
        let first = decodeCopy(UnsafeRawBufferPointer(rebasing: region.prefix(copyByteCount)))
        // A region shorter than the second copy's offset (a file cut inside the header) has no second copy.
        let secondRange =
            secondCopyByteOffset..<max(secondCopyByteOffset, min(region.count, secondCopyByteOffset + copyByteCount))
        let second =
            secondRange.count == copyByteCount
            ? decodeCopy(UnsafeRawBufferPointer(rebasing: region[secondRange])) : .badMagic
        let header: LogFileHeader
        let oneCopyDamaged: Bool
        switch (first, second) {
        case (.valid(let a), .valid):
            (header, oneCopyDamaged) = (a, false)
        case (.valid(let a), _):
            (header, oneCopyDamaged) = (a, true)
        case (_, .valid(let b)):
            (header, oneCopyDamaged) = (b, true)
        case (.badMagic, .badMagic):
            throw LogFormatError(
                .notALog, "is not an EventGraph log (no valid header magic)", path: path, byteOffset: 0)
        case (.outOfRange(let reason, let offset), _), (_, .outOfRange(let reason, let offset)):
            let copyOffset = if case .outOfRange = first { 0 } else { secondCopyByteOffset }
            throw LogFormatError(
                .damaged, "the file header's \(reason) (byte offset \(copyOffset + offset)); no copy is usable",
                path: path, byteOffset: UInt64(copyOffset + offset))
        default:
            throw LogFormatError(
                .damaged, "both copies of the file header fail their checksum (byte offsets 0 and 512)", path: path,
                byteOffset: 0)
        }
        guard header.majorVersion <= currentMajorVersion else {
            throw LogFormatError(
                .unsupportedVersion,
                "was written by format version \(header.majorVersion).\(header.minorVersion); this EventGraph reads "
                    + "version \(currentMajorVersion).x and older — upgrade EventGraph to open it",
                path: path, byteOffset: 8)
        }
        let unknown = header.incompatibleFeatures & ~knownIncompatibleFeatures
        guard unknown == 0 else {
            throw LogFormatError(
                .unsupportedFeature,
                "uses incompatible feature flags 0x\(String(unknown, radix: 16)) that this version of EventGraph "
                    + "does not understand — upgrade EventGraph to open it",
                path: path, byteOffset: 16)
        }
        return (header, oneCopyDamaged)
    }
}
