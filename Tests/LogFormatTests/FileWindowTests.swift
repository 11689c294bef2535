import Foundation
import Testing

@testable import LogFormat

/// The scan's buffered reads: sequential reads fetch a large window; a read that skips ahead of it (a deferred chunk
/// body) fetches a small one, so that the store's open does not read and hold the whole checkpoint.
@Suite("File window reads")
struct FileWindowTests {
    @Test func aReadPastTheWindowIsSmallAndASequentialOneLarge() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("window.bin")
        try Data(repeating: 7, count: 3 << 20).write(to: URL(fileURLWithPath: path))
        var window = FileWindow(
            file: try LogFile(path: path, flags: O_RDONLY, faults: nil), limit: UInt64(3 << 20))
        // The first read skips the start of the file: a small window.
        #expect(try window.withBytes(at: 1024, count: 48) { $0.count } == 48)
        #expect(window.bufferedByteCount == FileWindow.skipReadByteCount)
        // A frame header 1 MiB further (its body deferred): small again.
        #expect(try window.withBytes(at: 1 << 20, count: 48) { $0[0] } == 7)
        #expect(window.bufferedByteCount == FileWindow.skipReadByteCount)
        // Reading on from the window's end is sequential: up to 8 MiB (here the rest of the file).
        let end = UInt64(1 << 20) + UInt64(FileWindow.skipReadByteCount)
        #expect(try window.withBytes(at: end, count: 48) { $0.count } == 48)
        #expect(window.bufferedByteCount == (3 << 20) - Int(end))
    }
}
