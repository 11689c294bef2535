/// A frame ready to be written: a type, a payload and the transaction/part it belongs to.
///
/// Compression and the body checksum happen in ``encodeBody(seed:dictionary:)`` — outside any lock — and the
/// header (sequence number and watermark) is completed by the writer when the frame's position is known.
package struct OutgoingFrame: Sendable {
    /// The frame's type.
    package var type: FrameType
    /// The transaction it belongs to (transaction, fragment and blob frames), else 0.
    package var transactionID: UInt64
    /// Fragment position or blob index; 0 otherwise.
    package var partIndex: UInt32
    /// The bytes to store (compressed when worthwhile).
    package var payload: [UInt8]

    /// Creates a frame to write.
    package init(type: FrameType, transactionID: UInt64 = 0, partIndex: UInt32 = 0, payload: [UInt8]) {
        self.type = type
        self.transactionID = transactionID
        self.partIndex = partIndex
        self.payload = payload
    }
}

extension OutgoingFrame {
    /// The frames of a transaction payload: one whole frame, or first/middle/last fragments of at most
    /// `fragmentByteCount` bytes each.
    static func transactionFrames(id: UInt64, payload: [UInt8], fragmentByteCount: Int) -> [OutgoingFrame] {
        let fragment = max(1, min(fragmentByteCount, LogLimits.maxFrameRawByteCount))
        guard payload.count > fragment else {
            return [OutgoingFrame(type: .transaction, transactionID: id, payload: payload)]
        }
        var frames: [OutgoingFrame] = []
        var start = 0
        while start < payload.count {
            let end = min(start + fragment, payload.count)
            let type: FrameType =
                start == 0 ? .transactionFirst : end == payload.count ? .transactionLast : .transactionMiddle
            frames.append(
                OutgoingFrame(
                    type: type, transactionID: id, partIndex: UInt32(frames.count), payload: Array(payload[start..<end])
                ))
            start = end
        }
        return frames
    }
}

/// A frame body after compression, with everything the header needs except position-dependent fields.
struct EncodedBody: Sendable {
    var type: FrameType
    var codec: FrameCodec
    var transactionID: UInt64
    var partIndex: UInt32
    var rawByteCount: UInt32
    var body: [UInt8]
    var bodyChecksum: UInt32

    var frameByteCount: UInt64 { FrameHeader.frameByteCount(bodyByteCount: body.count) }

    /// Writes header + body + padding at the start of `out` (which has at least ``frameByteCount`` bytes).
    func write(into out: UnsafeMutableRawBufferPointer, sequence: UInt64, durableWatermark: UInt64, seed: UInt32) {
        let header = FrameHeader(
            bodyByteCount: UInt32(body.count), type: type, codec: codec, sequence: sequence,
            durableWatermark: durableWatermark, transactionID: transactionID, rawByteCount: rawByteCount,
            bodyChecksum: bodyChecksum, partIndex: partIndex)
        header.encode(into: UnsafeMutableRawBufferPointer(rebasing: out[0..<FrameHeader.byteCount]), seed: seed)
        body.withUnsafeBytes { source in
            UnsafeMutableRawBufferPointer(rebasing: out[FrameHeader.byteCount..<FrameHeader.byteCount + body.count])
                .copyMemory(from: source)
        }
        let end = Int(frameByteCount)
        for index in (FrameHeader.byteCount + body.count)..<end { out[index] = 0 }
    }
}

/// When a payload is compressed.
package enum CompressionPolicy {
    /// Payloads shorter than this are stored raw (LZ4 gains little on them).
    package static let minimumByteCount = 256
    /// Compression is kept only if it saves at least 1/8 (12.5 %) of the bytes.
    package static func isWorthKeeping(compressed: Int, raw: Int) -> Bool { compressed <= raw - raw / 8 }
}

extension OutgoingFrame {
    /// Compresses (when worthwhile) and checksums the payload.
    func encodeBody(seed: UInt32, dictionary: [UInt8]?) throws(LogFormatError) -> EncodedBody {
        guard payload.count <= LogLimits.maxFrameRawByteCount else {
            throw LogFormatError(
                .limitExceeded,
                "a \(type) frame payload of \(payload.count) bytes exceeds the limit of "
                    + "\(LogLimits.maxFrameRawByteCount) bytes")
        }
        var codec = FrameCodec.raw
        var body = payload
        if payload.count >= CompressionPolicy.minimumByteCount, type != .dictionary {
            let compressed = payload.withUnsafeBytes { LZ4.compress($0, dictionary: dictionary) }
            if let compressed, CompressionPolicy.isWorthKeeping(compressed: compressed.count, raw: payload.count) {
                body = compressed
                codec = dictionary == nil ? .lz4 : .lz4Dictionary
            }
        }
        return EncodedBody(
            type: type, codec: codec, transactionID: transactionID, partIndex: partIndex,
            rawByteCount: UInt32(payload.count), body: body, bodyChecksum: CRC32C.checksum(body, continuing: seed))
    }
}
