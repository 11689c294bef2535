/// Writes frames one after another into a new file (rewrite, salvage), all with the same watermark.
struct SequentialFrameWriter: ~Copyable {
    let file: LogFile
    let header: LogFileHeader
    let seed: UInt32
    var offset: UInt64
    var sequence: UInt64
    var buffer: [UInt8] = []
    var bufferStart: UInt64

    init(file: consuming LogFile, header: LogFileHeader) throws(LogFormatError) {
        self.file = file
        self.header = header
        self.seed = header.checksumSeed
        self.offset = LogFileHeader.framesByteOffset
        self.sequence = header.baseSequence
        self.bufferStart = LogFileHeader.framesByteOffset
        try self.file.write(header.encodedRegion(), at: 0)
    }

    /// Appends a frame (buffered); returns its byte offset.
    @discardableResult
    mutating func append(_ frame: OutgoingFrame, watermark: UInt64 = LogFileHeader.framesByteOffset)
        throws(LogFormatError) -> UInt64
    {
        try append(encoded: try frame.encodeBody(seed: seed, dictionary: nil), watermark: watermark)
    }

    /// Appends a frame whose body was compressed and checksummed with this file's seed (buffered); returns its
    /// byte offset.
    @discardableResult
    mutating func append(encoded body: EncodedBody, watermark: UInt64 = LogFileHeader.framesByteOffset)
        throws(LogFormatError) -> UInt64
    {
        guard sequence < UInt64.max else {
            throw LogFormatError(.limitExceeded, "the new file has used every frame sequence number", path: file.path)
        }
        let size = Int(body.frameByteCount)
        body.append(to: &buffer, sequence: sequence, durableWatermark: watermark, seed: seed)
        let frameOffset = offset
        offset += UInt64(size)
        self.sequence += 1
        if buffer.count >= 4 << 20 { try flush() }
        return frameOffset
    }

    /// Writes the buffered frames, and starts their writeback (the new file is synced once written: the disk
    /// writes it while the rest is made instead of all at the sync).
    mutating func flush() throws(LogFormatError) {
        guard !buffer.isEmpty else { return }
        try file.write(buffer, at: bufferStart)
        file.startWriteback(at: bufferStart, count: buffer.count)
        bufferStart += UInt64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes, syncs, appends a seal whose watermark proves every earlier frame durable, and syncs again.
    mutating func finishWithSeal() throws(LogFormatError) {
        try flush()
        try file.sync()
        try append(OutgoingFrame(type: .seal, payload: []), watermark: offset)
        try flush()
        try file.sync()
    }
}
