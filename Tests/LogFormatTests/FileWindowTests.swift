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

@Suite("File window buffer")
struct FileWindowBufferTests {
    /// A scan reads a log 8 MiB at a time: each read goes into the window's one buffer, not a new array (whose
    /// pages the kernel had to fault in again for every 8 MiB read).
    @Test func sequentialReadsReuseOneBuffer() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("window.bin")
        let size = 3 * FileWindow.chunkByteCount
        // Each 4 KiB block starts with its number.
        var bytes = [UInt8](repeating: 0, count: size)
        for block in 0..<size / 4096 { bytes[block * 4096] = UInt8(truncatingIfNeeded: block) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        var window = FileWindow(file: try LogFile(path: path, flags: O_RDONLY, faults: nil), limit: UInt64(size))
        var addresses: Set<UnsafeRawPointer?> = []
        for offset in stride(from: 0, to: size, by: FileWindow.chunkByteCount / 2) {
            let first = try window.withBytes(at: UInt64(offset), count: 4096) { $0[0] }
            #expect(first == UInt8(truncatingIfNeeded: offset / 4096))
            addresses.insert(window.bufferAddress)
        }
        #expect(addresses.count == 1)
        // A read after the window was discarded (a re-read of a failed frame) reads the file again, into the same
        // buffer.
        window.discardBuffer()
        #expect(window.bufferedByteCount == 0)
        #expect(try window.withBytes(at: 4096 * 5, count: 8) { $0[0] } == 5)
        #expect(window.bufferAddress == addresses.first!)
    }
}
