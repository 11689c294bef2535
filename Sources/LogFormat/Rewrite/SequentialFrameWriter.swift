/// Writes frames one after another into a new file (rewrite, salvage), all with the same watermark.
///
/// Frames are gathered in a buffer; each full buffer is written by a thread of its own (``WriteBehind``) while the
/// next one fills. Everything is written before the file is synced (``sync()``), and before the writer goes away.
struct SequentialFrameWriter: ~Copyable {
    private let shared: SharedLogFile
    private let writes: WriteBehind
    let header: LogFileHeader
    let seed: UInt32
    var offset: UInt64
    var sequence: UInt64
    var buffer: [UInt8] = []
    var bufferStart: UInt64

    init(file: consuming LogFile, header: LogFileHeader) throws(LogFormatError) {
        try file.write(header.encodedRegion(), at: 0)
        self.shared = SharedLogFile(file)
        self.writes = WriteBehind(shared)
        self.header = header
        self.seed = header.checksumSeed
        self.offset = LogFileHeader.framesByteOffset
        self.sequence = header.baseSequence
        self.bufferStart = LogFileHeader.framesByteOffset
    }

    deinit { writes.waitForWrites() }

    /// The file's path.
    var path: String { shared.path }

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
            throw LogFormatError(.limitExceeded, "the new file has used every frame sequence number", path: path)
        }
        let size = Int(body.frameByteCount)
        body.append(to: &buffer, sequence: sequence, durableWatermark: watermark, seed: seed)
        let frameOffset = offset
        offset += UInt64(size)
        self.sequence += 1
        if buffer.count >= 4 << 20 { try flush() }
        return frameOffset
    }

    /// Hands the buffered frames to be written, after which their writeback starts (the new file is synced once
    /// written: the disk writes it while the rest is made instead of all at the sync).
    ///
    /// - Throws: the failure of an earlier buffer's write.
    mutating func flush() throws(LogFormatError) {
        guard !buffer.isEmpty else { return }
        let count = buffer.count
        var full: [UInt8] = []
        swap(&full, &buffer)
        buffer = try writes.write(full, at: bufferStart)
        bufferStart += UInt64(count)
    }

    /// Writes what is buffered, waits for every write, and syncs the file's data.
    mutating func sync() throws(LogFormatError) {
        try flush()
        try writes.drain()
        try shared.file.sync()
    }

    /// Flushes, syncs, appends a seal whose watermark proves every earlier frame durable, and syncs again.
    mutating func finishWithSeal() throws(LogFormatError) {
        try sync()
        try append(OutgoingFrame(type: .seal, payload: []), watermark: offset)
        try sync()
    }
}
