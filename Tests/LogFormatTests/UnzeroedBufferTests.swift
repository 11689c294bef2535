import Foundation
import TestSupport
import Testing

@testable import LogFormat

/// `LogFile.read`, `LZ4.decompress` and `LZ4.compress` fill buffers they do not zero first: what they return must be
/// exactly the bytes read, decoded or compressed — fewer at the end of a file, nothing from a block that does not
/// decode to its length.
@Suite("Reads and decompression into buffers that are not zeroed first")
struct UnzeroedBufferTests {
    static func pattern(_ count: Int) -> [UInt8] {
        var random = SeededGenerator(seed: 53)
        // Runs of repeated bytes among random ones, so that LZ4 compresses it.
        return (0..<count).map { index in index % 64 < 40 ? UInt8(index / 64 % 251) : UInt8(random.next() & 0xFF) }
    }

    @Test("a read returns the bytes at its offset, and only those left before the end of the file")
    func readsUpToTheEnd() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("bytes.bin")
        let bytes = Self.pattern(100_000)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let file = try LogFile(path: path, flags: O_RDONLY, faults: nil)
        #expect(try file.read(count: 4096, at: 1000) == Array(bytes[1000..<5096]))
        // Past the end: the rest of the file, not a buffer padded with whatever the allocation held.
        #expect(try file.read(count: 4096, at: 98_000) == Array(bytes[98_000...]))
        #expect(try file.read(count: 4096, at: 100_000) == [])
        #expect(try file.read(count: 0, at: 10) == [])
    }

    @Test("a block decodes to its exact length, or not at all")
    func decompressesExactly() throws {
        let bytes = Self.pattern(200_000)
        let block = try #require(bytes.withUnsafeBytes { LZ4.compress($0) })
        #expect(block.withUnsafeBytes { LZ4.decompress($0, rawByteCount: bytes.count) } == bytes)
        // A recorded length other than the block's own is refused, longer or shorter.
        #expect(block.withUnsafeBytes { LZ4.decompress($0, rawByteCount: bytes.count + 1) } == nil)
        #expect(block.withUnsafeBytes { LZ4.decompress($0, rawByteCount: bytes.count - 1) } == nil)
        // A truncated block, and garbage.
        #expect(block.dropLast(9).withUnsafeBytes { LZ4.decompress($0, rawByteCount: bytes.count) } == nil)
        let garbage = (0..<512).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 13) }
        #expect(garbage.withUnsafeBytes { LZ4.decompress($0, rawByteCount: 4096) } == nil)
        #expect(block.withUnsafeBytes { LZ4.decompress($0, rawByteCount: 0) } == nil)
    }

    @Test("a compressed block is the compressor's bytes only, and nothing when compression does not shrink")
    func compressesExactly() throws {
        for count in [1, 300, 65_536, 1 << 20] {
            let bytes = Self.pattern(count)
            guard let block = bytes.withUnsafeBytes({ LZ4.compress($0) }) else {
                #expect(count <= 300, "\(count) patterned bytes compress")
                continue
            }
            #expect(block.count < bytes.count)
            #expect(block.withUnsafeBytes { LZ4.decompress($0, rawByteCount: bytes.count) } == bytes)
            // The same input, compressed again into another unzeroed buffer, gives the same block.
            #expect(bytes.withUnsafeBytes { LZ4.compress($0) } == block)
            let dictionary = Self.pattern(4096)
            let withDictionary = try #require(bytes.withUnsafeBytes { LZ4.compress($0, dictionary: dictionary) })
            #expect(
                withDictionary.withUnsafeBytes {
                    LZ4.decompress($0, rawByteCount: bytes.count, dictionary: dictionary)
                } == bytes)
        }
        var random = SeededGenerator(seed: 7)
        let noise = (0..<4096).map { _ in UInt8(random.next() & 0xFF) }
        #expect(noise.withUnsafeBytes { LZ4.compress($0) } == nil)
    }
}
