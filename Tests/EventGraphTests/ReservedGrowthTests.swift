import LogFormat
import Testing

@testable import EventGraph

/// The chunk after a full one reserves its arenas and to-many targets from the full one's live counts with a small
/// margin (an eighth was 58 MB of big1m's replayed state, reserved and never written: h91), and a storage that
/// outgrows the reservation grows once by an eighth of what it needs, then doubles as any array does.
@Suite("Storages reserved from the full chunk before: a small margin, an eighth's growth past it")
struct ReservedGrowthTests {
    /// What an allocator may round a buffer up by (glibc: a page for a mapped block) and the array's header.
    static let allocatorSlack = 4096 + 64

    static let references = (1...8).map { ObjectReference(entityIndex: 1, key: UInt64($0)) }

    /// A string of `length` bytes that differs from object to object.
    static func text(_ number: Int, length: Int) -> String {
        let prefix = "post \(number) "
        return prefix + String(repeating: "x", count: max(0, length - prefix.utf8.count))
    }

    /// Appends `count` objects with a string of `length` bytes and a to-many list of `listLength(number)` targets.
    static func fill(
        _ chunk: inout ColumnChunk, count: Int, from first: Int = 0, length: Int, listLength: (Int) -> Int
    ) {
        for number in first..<first + count {
            let slot = chunk.appendSlot(key: UInt64(number + 1), version: 1, valueCount: 2)
            chunk.set(.attribute(.string(text(number, length: length))), property: 0, at: slot)
            let list = (0..<listLength(number)).map { references[(number + $0) % 8] }
            chunk.set(.toMany(list), property: 1, at: slot)
        }
    }

    @Test("the chunk after a full one reserves its live bytes and targets and a sixty-fourth more, not an eighth")
    func marginIsASixtyFourth() {
        var full = ColumnChunk()
        Self.fill(&full, count: ColumnChunk.slotCapacity, length: 100) { 1 + $0 % 3 }
        #expect(full.isFull)
        var next = ColumnChunk()
        next.reserveCapacity(like: full)

        let liveBytes = full.columns[0].arena.liveByteCount
        #expect(liveBytes == ColumnChunk.slotCapacity * 100)
        let byteCapacity = next.columns[0].arena.bytes.capacity
        #expect(byteCapacity >= liveBytes + liveBytes / 64)
        #expect(byteCapacity <= liveBytes + liveBytes / 64 + Self.allocatorSlack, "\(byteCapacity) for \(liveBytes)")

        let liveTargets = full.columns[1].manyTargets.count
        let stride = MemoryLayout<ObjectReference>.stride
        let targetCapacity = next.columns[1].manyTargets.capacity
        #expect(targetCapacity >= liveTargets + liveTargets / 64)
        #expect(
            targetCapacity * stride <= (liveTargets + liveTargets / 64) * stride + Self.allocatorSlack,
            "\(targetCapacity) for \(liveTargets)")

        // Filled like the full one, the chunk reads back what was written and allocates nothing more.
        Self.fill(&next, count: ColumnChunk.slotCapacity, from: 0, length: 100) { 1 + $0 % 3 }
        #expect(next.columns[0].arena.bytes.capacity == byteCapacity)
        #expect(next.columns[1].manyTargets.capacity == targetCapacity)
        for slot in [0, 1, 2_047, 4_095] {
            #expect(next.columns[0].value(at: slot) == full.columns[0].value(at: slot))
            #expect(next.columns[1].value(at: slot) == full.columns[1].value(at: slot))
        }
    }

    @Test("an arena past its reservation grows to an eighth more than it needs, once, then doubles")
    func arenaGrowsByAnEighthOnce() {
        var arena = ByteArena()
        arena.reserveCapacity(byteCount: 200_000, slotCount: ColumnChunk.slotCapacity)
        let reserved = arena.bytes.capacity
        let value = [UInt8](repeating: 0x61, count: 100)
        var slot = 0
        func set() {
            value.withUnsafeBytes { arena.set($0, at: slot, isASCII: true) }
            slot += 1
        }
        while arena.bytes.count + value.count <= reserved { set() }
        #expect(arena.bytes.capacity == reserved)
        set()  // past the reservation
        let needed = arena.bytes.count
        let grown = arena.bytes.capacity
        #expect(grown >= needed + needed / 8)
        #expect(grown <= needed + needed / 8 + Self.allocatorSlack, "\(grown) after \(reserved), needing \(needed)")
        while arena.bytes.count + value.count <= grown { set() }
        set()  // past the eighth: the array's own growth
        #expect(arena.bytes.capacity >= 2 * grown)
        for read in [0, 1, slot / 2, slot - 1] {
            #expect(arena.withBytes(at: read) { Array($0) } == value)
        }
        #expect(arena.withBytes(at: slot) { $0.count } == 0)
    }

    @Test("to-many targets past their reservation grow to an eighth more than they need, once, then double")
    func targetsGrowByAnEighthOnce() {
        var full = ColumnChunk()
        Self.fill(&full, count: ColumnChunk.slotCapacity, length: 10) { _ in 2 }
        var next = ColumnChunk()
        next.reserveCapacity(like: full)
        let reserved = next.columns[1].manyTargets.capacity
        var number = 0
        // Lists of three where the full chunk had two: past the reservation two thirds of the way.
        while next.columns[1].manyTargets.count + 3 <= reserved {
            Self.fill(&next, count: 1, from: number, length: 10) { _ in 3 }
            number += 1
        }
        #expect(next.columns[1].manyTargets.capacity == reserved)
        Self.fill(&next, count: 1, from: number, length: 10) { _ in 3 }
        number += 1
        let needed = next.columns[1].manyTargets.count
        let grown = next.columns[1].manyTargets.capacity
        let stride = MemoryLayout<ObjectReference>.stride
        #expect(grown >= needed + needed / 8)
        #expect((grown - needed - needed / 8) * stride <= Self.allocatorSlack, "\(grown) after \(reserved)")
        // Bounded by the chunk's slots: an array that doubled at the first overflow is not filled again.
        while next.columns[1].manyTargets.count + 3 <= grown, number < ColumnChunk.slotCapacity - 1 {
            Self.fill(&next, count: 1, from: number, length: 10) { _ in 3 }
            number += 1
        }
        Self.fill(&next, count: 1, from: number, length: 10) { _ in 3 }
        number += 1
        #expect(next.columns[1].manyTargets.capacity >= 2 * grown)
        for slot in [0, 1, number / 2, number - 1] {
            let expected = (0..<3).map { Self.references[(slot + $0) % 8] }
            #expect(next.columns[1].value(at: slot) == .toMany(expected))
        }
    }
}
