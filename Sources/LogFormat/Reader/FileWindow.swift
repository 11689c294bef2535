/// Sequential buffered access to a log file by byte offset, reading large chunks with `pread`.
///
/// The window never reads past `limit` (the file size when scanning began, or the end of what the writer had
/// finished when the scan runs beside it in the same process). Past the writer's finished end a reader may see a
/// frame half-written; with preallocated space the file's size includes such bytes, and a later frame may be
/// visible beside them: ``LogScanner/scan(from:policy:_:)`` re-reads a failed frame before it calls it damage.
struct FileWindow: ~Copyable {
    static let chunkByteCount = 8 << 20
    /// What a read that skips ahead of the window fetches: a scan that defers chunk bodies (the store's open) jumps
    /// from frame header to frame header, and reading 8 MiB at each jump would read, and hold, the whole checkpoint.
    static let skipReadByteCount = 16 << 10

    /// The file, shared with the fragmented transactions a scan delivers (they re-read their frames from it).
    let shared: SharedLogFile
    let limit: UInt64
    /// The bytes read last are `buffer[0..<bufferedByteCount]`. The array is kept and read into again, not made
    /// anew for each read: a fresh 8 MiB array per read faulted in 2,048 new pages for every 8 MiB a scan read (a
    /// replay's largest cost in the kernel after the state's own pages).
    private var buffer: [UInt8] = []
    private(set) var bufferedByteCount = 0
    private var bufferStart: UInt64 = 0

    init(file: consuming LogFile, limit: UInt64) {
        self.shared = SharedLogFile(file)
        self.limit = limit
    }

    var path: String { shared.path }

    /// Forgets the bytes read so far: the next access reads the file again. A scan of a log that a writer is
    /// appending to re-reads a failed frame this way once a later frame proves it was synced (a `pread` may have
    /// copied the failed frame's bytes before the writer wrote them, and the later frame's after).
    mutating func discardBuffer() {
        bufferedByteCount = 0
        bufferStart = 0
    }

    /// Where the window's bytes are in memory (a probe for tests: reads reuse the buffer).
    var bufferAddress: UnsafeRawPointer? { buffer.withUnsafeBytes { $0.baseAddress } }

    /// Calls `body` with `count` bytes at `offset`, or returns nil when they extend past the limit.
    mutating func withBytes<R>(
        at offset: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) throws(LogFormatError) -> R
    ) throws(LogFormatError) -> R? {
        guard offset <= limit, UInt64(count) <= limit - offset else { return nil }
        let bufferEnd = bufferStart + UInt64(bufferedByteCount)
        if offset < bufferStart || offset + UInt64(count) > bufferEnd {
            // Reading on from the window's end (or from inside it) is sequential: a large read. A read past its end
            // skipped bytes (a deferred body): a small one, until the reads are sequential again.
            let isSkip = offset > bufferEnd
            let window = isSkip ? Self.skipReadByteCount : Self.chunkByteCount
            let want = Int(min(UInt64(max(window, count)), limit - offset))
            // Grown to the largest read so far (a store's open that only skips keeps 16 KiB), never shrunk.
            if buffer.count < want { buffer = [UInt8](repeating: 0, count: want) }
            bufferedByteCount = 0
            let shared = self.shared
            let read = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(LogFormatError) in
                    try shared.file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<want]), at: offset)
                }
            }
            bufferedByteCount = try read.get()
            bufferStart = offset
            guard bufferedByteCount >= count else { return nil }  // the file shrank underneath us
        }
        let start = Int(offset - bufferStart)
        let result = buffer.withUnsafeBytes { raw in
            Result { () throws(LogFormatError) in try body(UnsafeRawBufferPointer(rebasing: raw[start..<start + count]))
            }
        }
        return try result.get()
    }
}
