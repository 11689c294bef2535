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
    /// The bytes to store (compressed when worthwhile): a whole array, or one fragment of a transaction's payload
    /// read in place (a fragment copied out of a 55 MB payload of 100,000 posts cost 6 % of a bulk insert's CPU).
    package var payload: ArraySlice<UInt8>

    /// Creates a frame to write.
    package init(type: FrameType, transactionID: UInt64 = 0, partIndex: UInt32 = 0, payload: [UInt8]) {
        self.init(type: type, transactionID: transactionID, partIndex: partIndex, slice: payload[...])
    }

    /// Creates a frame that stores part of an array.
    package init(type: FrameType, transactionID: UInt64 = 0, partIndex: UInt32 = 0, slice: ArraySlice<UInt8>) {
        self.type = type
        self.transactionID = transactionID
        self.partIndex = partIndex
        self.payload = slice
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
                    type: type, transactionID: id, partIndex: UInt32(frames.count), slice: payload[start..<end]))
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
    /// The body's bytes, unless they are in a block (``inBlock``): then empty.
    var body: [UInt8]
    var bodyChecksum: UInt32
    /// Where the body is when it was encoded into a block with the other frames of its transaction
    /// (``OutgoingFrame/encodeBody(seed:into:index:)``).
    var inBlock: BlockBody? = nil

    /// A body in frame `index`'s room of a ``FrameBodyBlock``: its first `count` bytes.
    struct BlockBody: Sendable {
        let block: FrameBodyBlock
        let index: Int
        let count: Int
    }

    /// The body's length in bytes.
    var bodyByteCount: Int { inBlock?.count ?? body.count }

    var frameByteCount: UInt64 { FrameHeader.frameByteCount(bodyByteCount: bodyByteCount) }

    /// Calls `read` with the body's bytes, wherever they are.
    func withBodyBytes<Result>(_ read: (UnsafeRawBufferPointer) -> Result) -> Result {
        guard let inBlock else { return body.withUnsafeBytes(read) }
        return withExtendedLifetime(inBlock.block) { read(inBlock.block.body(inBlock.index, count: inBlock.count)) }
    }

    /// Appends header + body + padding (``frameByteCount`` bytes) to `buffer`: the body is copied once, not into
    /// bytes zeroed first (a bulk insert's 30 MB of frames were zeroed, then overwritten: 2.5 % of its CPU).
    func append(to buffer: inout [UInt8], sequence: UInt64, durableWatermark: UInt64, seed: UInt32) {
        let header = FrameHeader(
            bodyByteCount: UInt32(bodyByteCount), type: type, codec: codec, sequence: sequence,
            durableWatermark: durableWatermark, transactionID: transactionID, rawByteCount: rawByteCount,
            bodyChecksum: bodyChecksum, partIndex: partIndex)
        let position = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: FrameHeader.byteCount))
        buffer.withUnsafeMutableBytes { out in
            header.encode(
                into: UnsafeMutableRawBufferPointer(rebasing: out[position..<position + FrameHeader.byteCount]),
                seed: seed)
        }
        if inBlock == nil {
            buffer.append(contentsOf: body)
        } else {
            withBodyBytes { bytes in buffer.append(contentsOf: bytes.assumingMemoryBound(to: UInt8.self)) }
        }
        let padding = Int(frameByteCount) - FrameHeader.byteCount - bodyByteCount
        buffer.append(contentsOf: repeatElement(0, count: padding))
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
    /// Compresses (when worthwhile) and checksums the payload; without a dictionary, into an array of `arrays`
    /// when given (handed back to it when the compression is not kept).
    func encodeBody(seed: UInt32, dictionary: [UInt8]?, arrays: ByteArrayPool? = nil) throws(LogFormatError)
        -> EncodedBody
    {
        try checkPayloadLimit()
        var codec = FrameCodec.raw
        var compressedBody: [UInt8]?
        if isCompressible {
            let compressed: [UInt8]?
            if let arrays, dictionary == nil {
                var output = arrays.takeAny()
                let isSmaller = payload.withUnsafeBytes { LZ4.compress($0, into: &output) }
                compressed = isSmaller ? output : nil
                if !isSmaller { arrays.recycle(output) }
            } else {
                compressed = payload.withUnsafeBytes { LZ4.compress($0, dictionary: dictionary) }
            }
            if let compressed, CompressionPolicy.isWorthKeeping(compressed: compressed.count, raw: payload.count) {
                compressedBody = compressed
                codec = dictionary == nil ? .lz4 : .lz4Dictionary
            } else if let compressed, let arrays {
                arrays.recycle(compressed)
            }
        }
        // A whole array's slice becomes that array again without a copy; a fragment kept raw is copied here, once.
        let body = compressedBody ?? Array(payload)
        return EncodedBody(
            type: type, codec: codec, transactionID: transactionID, partIndex: partIndex,
            rawByteCount: UInt32(payload.count), body: body, bodyChecksum: CRC32C.checksum(body, continuing: seed))
    }

    /// ``encodeBody(seed:dictionary:arrays:)`` without a dictionary, into the room of frame `index` of `block` (a
    /// block made for this frame's transaction, ``SharedFrameEncoding``): the same body, in memory of the block's.
    func encodeBody(seed: UInt32, into block: FrameBodyBlock, index: Int) throws(LogFormatError) -> EncodedBody {
        try checkPayloadLimit()
        let room = block.room(index)
        var codec = FrameCodec.raw
        var count = payload.count
        if isCompressible, let written = payload.withUnsafeBytes({ LZ4.compress($0, into: room) }),
            CompressionPolicy.isWorthKeeping(compressed: written, raw: payload.count)
        {
            (codec, count) = (.lz4, written)
        } else {
            payload.withUnsafeBytes { room.copyMemory(from: $0) }
        }
        let checksum = CRC32C.checksum(block.body(index, count: count), continuing: seed)
        return EncodedBody(
            type: type, codec: codec, transactionID: transactionID, partIndex: partIndex,
            rawByteCount: UInt32(payload.count), body: [], bodyChecksum: checksum,
            inBlock: EncodedBody.BlockBody(block: block, index: index, count: count))
    }

    /// Whether the payload is compressed when it is encoded (else it is stored raw): long enough, and not a
    /// dictionary's.
    private var isCompressible: Bool { payload.count >= CompressionPolicy.minimumByteCount && type != .dictionary }

    private func checkPayloadLimit() throws(LogFormatError) {
        guard payload.count <= LogLimits.maxFrameRawByteCount else {
            throw LogFormatError(
                .limitExceeded,
                "a \(type) frame payload of \(payload.count) bytes exceeds the limit of "
                    + "\(LogLimits.maxFrameRawByteCount) bytes")
        }
    }
}
