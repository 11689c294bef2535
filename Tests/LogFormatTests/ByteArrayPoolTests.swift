import Testing

@testable import LogFormat

/// A rewrite's `ByteArrayPool` hands the arrays of written chunks out again (their storage, not their bytes), keeps
/// a bounded number of them, and never changes bytes another owner of a handed-back array still reads; LZ4 into a
/// reused array gives the bytes a fresh one gets, so the files a rewrite writes do not change.
@Suite("Byte array pool")
struct ByteArrayPoolTests {
    static func address(_ array: [UInt8]) -> UnsafeRawPointer? {
        array.withUnsafeBytes { $0.baseAddress }
    }

    /// Bytes LZ4 compresses about 2:1 (words of a small vocabulary), `count` of them, from `seed`.
    static func prose(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed | 1
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 16)
        while bytes.count < count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let word = Int(state >> 58)
            bytes.append(contentsOf: Array("w\(word * 7_919 % 257)".utf8) + [0x20])
        }
        return Array(bytes.prefix(count))
    }

    @Test func anArrayHandedBackIsHandedOutAgainEmptyWithItsStorage() {
        let pool = ByteArrayPool(limit: 4)
        var array = [UInt8](repeating: 7, count: 100_000)
        array.reserveCapacity(200_000)
        let storage = Self.address(array)
        pool.recycle(array)
        array = []
        #expect(pool.count == 1)
        let taken = pool.take(minimumCapacity: 150_000)
        #expect(taken.isEmpty && taken.capacity >= 150_000)
        #expect(Self.address(taken) == storage)
        #expect(pool.count == 0)
        // Empty: a new array with the room asked for.
        #expect(pool.take(minimumCapacity: 70_000).capacity >= 70_000)
    }

    @Test func thePoolKeepsNoMoreThanItsLimitAndNoSmallArrays() {
        let pool = ByteArrayPool(limit: 3)
        for _ in 0..<5 { pool.recycle([UInt8](repeating: 1, count: ByteArrayPool.smallestKeptCapacity)) }
        #expect(pool.count == 3)
        let small = ByteArrayPool(limit: 3)
        small.recycle([UInt8](repeating: 1, count: ByteArrayPool.smallestKeptCapacity / 2))
        small.recycle([])
        #expect(small.count == 0)
    }

    @Test func anArrayStillSharedIsNotWrittenThrough() {
        let pool = ByteArrayPool(limit: 2)
        let kept = [UInt8](repeating: 9, count: 80_000)
        pool.recycle(kept)
        var taken = pool.take(minimumCapacity: 80_000)
        taken.append(contentsOf: repeatElement(3, count: 80_000))
        #expect(kept.allSatisfy { $0 == 9 })
        pool.recycle(kept)
        var output = pool.takeAny()
        let source = Self.prose(90_000, seed: 5)
        #expect(source.withUnsafeBytes { LZ4.compress($0, into: &output) })
        #expect(kept.count == 80_000 && kept.allSatisfy { $0 == 9 })
    }

    /// Into an empty array, one with garbage shorter than the block's bound, and one longer than it: the same block
    /// as a fresh array's, which decompresses to the source.
    @Test(arguments: [0, 1_000, 400_000])
    func lz4IntoAReusedArrayGivesTheFreshArraysBlock(garbageByteCount: Int) throws {
        let source = Self.prose(200_000, seed: UInt64(garbageByteCount) + 11)
        let fresh = try #require(source.withUnsafeBytes { LZ4.compress($0) })
        var output = [UInt8](repeating: 0xA5, count: garbageByteCount)
        #expect(source.withUnsafeBytes { LZ4.compress($0, into: &output) })
        #expect(output == fresh)
        #expect(output.withUnsafeBytes { LZ4.decompress($0, rawByteCount: source.count) } == source)
        // Bytes that do not compress: refused, as a fresh array's compression is.
        var noise = [UInt8](repeating: 0, count: 64)
        for index in noise.indices { noise[index] = UInt8(truncatingIfNeeded: index &* 151 &+ 17) }
        #expect(noise.withUnsafeBytes { LZ4.compress($0) } == nil)
        #expect(!noise.withUnsafeBytes { LZ4.compress($0, into: &output) })
    }

    /// A frame body compressed into a pool's array is the body a fresh compression makes (type, codec, length,
    /// checksum, bytes), and a payload kept raw gives the array back.
    @Test func aFrameBodyFromThePoolIsTheFreshBody() throws {
        let pool = ByteArrayPool(limit: 4)
        pool.recycle([UInt8](repeating: 0x5A, count: 300_000))
        let frame = OutgoingFrame(
            type: .checkpointEntityChunk, transactionID: 12, payload: Self.prose(250_000, seed: 3))
        let pooled = try frame.encodeBody(seed: 0xDEAD_BEEF, dictionary: nil, arrays: pool)
        let fresh = try frame.encodeBody(seed: 0xDEAD_BEEF, dictionary: nil)
        #expect(pooled.body == fresh.body && pooled.codec == .lz4 && pooled.bodyChecksum == fresh.bodyChecksum)
        #expect(pooled.rawByteCount == fresh.rawByteCount && pooled.frameByteCount == fresh.frameByteCount)
        #expect(pool.count == 0)
        var state: UInt64 = 99
        let noise = (0..<100_000).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        let random = OutgoingFrame(type: .checkpointEntityChunk, transactionID: 12, payload: noise)
        pool.recycle(pooled.body)
        let raw = try random.encodeBody(seed: 1, dictionary: nil, arrays: pool)
        #expect(raw.codec == .raw && raw.body == random.payload.map { $0 })
        #expect(pool.count == 1)
    }
}
