import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A checkpoint chunk decoded after another of its entity reserves its storages from how that one filled them
/// (``DecodedChunkShape``): the same values whatever was learned, and a reservation bounded by what a decoded chunk
/// really held.
@Suite("Checkpoint chunks reserved from the shape of the last one decoded")
struct DecodedChunkShapeTests {
    /// Every live slot's row of a chunk, in slot order.
    static func rows(of chunk: ColumnChunk) -> [String] {
        (0..<chunk.slotCount).filter(chunk.isLive).map {
            "\(chunk.row(at: $0, entityIndex: DecodedChunkCacheTests.studentEntity))"
        }
    }

    @Test func aChunkDecodedAfterAnotherReadsTheSameRowsAsOneDecodedFirst() throws {
        let directory = TemporaryDirectory()
        try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 10_000)
        // The chunks decoded in reverse order: the last one with no shape learned, each other reserved from the one
        // decoded before it.
        let expected: [[String]]
        do {
            let first = try DecodedChunkCacheTests.open(directory.file(), byteBudget: Int.max)
            defer { try? first.close() }
            let reversed = DecodedChunkCacheTests.studentBoxes(of: first)
            #expect(reversed.count == 3)
            #expect(reversed[0].shapeForTests.shape == nil)
            expected = try reversed.reversed().map { try Self.rows(of: $0.load()) }.reversed()
        }

        // In order, in another container: the first decoded with no shape, each later one reserved from the one
        // before it (of another size: 3,511 slots, then 1,549), and each learned from.
        let second = try DecodedChunkCacheTests.open(directory.file(), byteBudget: Int.max)
        defer { try? second.close() }
        let boxes = DecodedChunkCacheTests.studentBoxes(of: second)
        #expect(boxes[0].shapeForTests.shape == nil)
        let chunks = try boxes.map { box in
            let chunk = try box.load()
            let shape = try #require(box.shapeForTests.shape)
            #expect(shape.slotCount == chunk.slotCount)
            #expect(shape.columns.count == chunk.columns.count)
            return chunk
        }
        #expect(chunks.map(\.slotCount).allSatisfy { $0 >= DecodedChunkShape.minimumSlotCount })
        #expect(chunks.map(Self.rows) == expected)
        // Reserved or not, a decoded chunk keeps no more than an eighth spare in an arena.
        for chunk in chunks {
            for column in chunk.columns {
                #expect(column.arena.bytes.capacity - column.arena.bytes.count <= column.arena.bytes.count / 8)
            }
        }
    }

    @Test func aSmallChunkTeachesNothingAndAReservationIsBounded() throws {
        var small = ColumnChunk()
        for key in 1...UInt64(DecodedChunkShape.minimumSlotCount - 1) {
            let slot = small.appendSlot(key: key, version: 1, valueCount: 1)
            small.set(.attribute(.string(String(repeating: "x", count: 1_000))), property: 0, at: slot)
        }
        let shape = DecodedChunkShape()
        shape.learn(from: small)
        #expect(shape.shape == nil)

        var large = small
        for key in UInt64(DecodedChunkShape.minimumSlotCount)...UInt64(DecodedChunkShape.minimumSlotCount) {
            let slot = large.appendSlot(key: key, version: 1, valueCount: 1)
            large.set(.attribute(.string(String(repeating: "x", count: 1_000))), property: 0, at: slot)
        }
        shape.learn(from: large)
        let learned = try #require(shape.shape)
        #expect(learned.slotCount == DecodedChunkShape.minimumSlotCount)
        #expect(learned.columns.count == 1 && learned.columns[0].arenaByteCount == 512_000)

        // A directory's count past a chunk's capacity reserves for the capacity: at most capacity / 512 times the
        // bytes the learned chunk held, a sixty-fourth more.
        var reserved = ColumnChunk()
        reserved.reserveCapacity(slotCount: Int(UInt32.max), shape: learned)
        #expect(
            reserved.keys.capacity >= ColumnChunk.slotCapacity && reserved.keys.capacity < 2 * ColumnChunk.slotCapacity)
        let arena = try #require(reserved.columns.first).arena
        #expect(arena.bytes.capacity >= 4_096_000 && arena.bytes.capacity <= 4_096_000 + 4_096_000 / 32)
        // The reserved chunk fills as a new one does.
        let slot = reserved.appendSlot(key: 1, version: 1, valueCount: 1)
        reserved.set(.attribute(.string("value")), property: 0, at: slot)
        #expect("\(reserved.row(at: slot, entityIndex: 0).values[0])" == "\(PropertyValue.attribute(.string("value")))")
    }

    /// The boxes of an entity's chunks share one shape and decode on any thread: threads learning and reading it at
    /// once must be ordered by its lock. Run under the thread sanitizer (`scripts/tsan`), which reported the contended
    /// `Synchronization.Mutex` this shape first held as a race (its hand-over happens in the kernel, out of sight).
    @Test func learnedAndReadFromManyThreadsAtOnce() throws {
        var chunk = ColumnChunk()
        for key in 1...UInt64(DecodedChunkShape.minimumSlotCount) {
            let slot = chunk.appendSlot(key: key, version: 1, valueCount: 1)
            chunk.set(.attribute(.int64(Int64(key))), property: 0, at: slot)
        }
        let shape = DecodedChunkShape()
        let learned = chunk
        let iterations = 50_000
        let seen = LockedValue([Int]())
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            var sum = 0
            for _ in 0..<iterations {
                shape.learn(from: learned)
                if let current = shape.shape { sum += current.slotCount }
            }
            seen.withLock { $0.append(sum) }
        }
        #expect(seen.withLock { $0 } == Array(repeating: iterations * DecodedChunkShape.minimumSlotCount, count: 4))
        let final = try #require(shape.shape)
        #expect(final.slotCount == DecodedChunkShape.minimumSlotCount && final.columns.count == 1)
    }
}
