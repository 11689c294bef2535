import LogFormat
import Testing

@testable import EventGraph

/// A replay's or a bulk save's inserts fill chunk after chunk; the chunk after a full one is given the room the full
/// one uses, so that its storages are allocated once, not grown by doubling (each doubling copied the array and
/// faulted its pages in again).
@Suite("A chunk after a full one is filled without reallocating")
struct ChunkReservationTests {
    static let references = (1...8).map { ObjectReference(entityIndex: 1, key: UInt64($0)) }

    /// Appends `count` objects with an integer, a string, a to-one target, a short to-many list and an empty string.
    static func fill(_ chunk: inout ColumnChunk, count: Int, from first: Int = 0) {
        for number in first..<first + count {
            let slot = chunk.appendSlot(key: UInt64(number + 1), version: 1, valueCount: 5)
            chunk.set(.attribute(.int64(Int64(number))), property: 0, at: slot)
            chunk.set(.attribute(.string("title \(number % 1000)")), property: 1, at: slot)
            chunk.set(.toOne(references[number % 8]), property: 2, at: slot)
            chunk.set(.toMany(Array(references.prefix(1 + number % 3))), property: 3, at: slot)
            chunk.set(.attribute(.string("")), property: 4, at: slot)
        }
    }

    @Test func everyStorageIsReservedLikeTheFullChunks() {
        var full = ColumnChunk()
        Self.fill(&full, count: ColumnChunk.slotCapacity)
        #expect(full.isFull)
        var next = ColumnChunk()
        next.reserveCapacity(like: full)
        // The first object reserves the per-slot arrays (keys, versions, value counts) as before.
        Self.fill(&next, count: 1)
        let reserved = next.heapByteCount
        Self.fill(&next, count: ColumnChunk.slotCapacity - 1, from: 1)
        #expect(next.isFull)
        #expect(next.heapByteCount == reserved, "a storage grew while the chunk filled")
        for property in 0..<5 {
            for slot in [0, 1, 2_047, 4_095] {
                #expect(next.columns[property].value(at: slot) == full.columns[property].value(at: slot))
            }
        }
    }
}
