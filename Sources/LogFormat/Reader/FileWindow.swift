/// Sequential buffered access to a log file by byte offset, reading large chunks with `pread`.
///
/// The window never reads past `limit` (the file size when scanning began), so a writer appending to the file
/// concurrently cannot make a reader see a frame it has not finished writing as anything but a torn tail.
struct FileWindow: ~Copyable {
    static let chunkByteCount = 8 << 20

    /// The file, shared with the fragmented transactions a scan delivers (they re-read their frames from it).
    let shared: SharedLogFile
    let limit: UInt64
    private var buffer: [UInt8] = []
    private var bufferStart: UInt64 = 0

    init(file: consuming LogFile, limit: UInt64) {
        self.shared = SharedLogFile(file)
        self.limit = limit
    }

    var path: String { shared.path }

    /// Calls `body` with `count` bytes at `offset`, or returns nil when they extend past the limit.
    mutating func withBytes<R>(
        at offset: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) throws(LogFormatError) -> R
    ) throws(LogFormatError) -> R? {
        guard offset <= limit, UInt64(count) <= limit - offset else { return nil }
        let bufferEnd = bufferStart + UInt64(buffer.count)
        if offset < bufferStart || offset + UInt64(count) > bufferEnd {
            let want = Int(min(UInt64(max(Self.chunkByteCount, count)), limit - offset))
            buffer = try shared.file.read(count: want, at: offset)
            bufferStart = offset
            guard buffer.count >= count else { return nil }  // the file shrank underneath us
        }
        let start = Int(offset - bufferStart)
        let result = buffer.withUnsafeBytes { raw in
            Result { () throws(LogFormatError) in try body(UnsafeRawBufferPointer(rebasing: raw[start..<start + count]))
            }
        }
        return try result.get()
    }
}
