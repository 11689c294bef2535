import LogFormat
import Testing

@testable import EventGraph

/// A column's to-many lists: short ones share one array of targets, long ones (a tag's list of every post) have an
/// array of their own that is written and read back without a copy.
@Suite("To-many lists in a column")
struct ColumnToManyListTests {
    static func targets(_ count: Int, from first: UInt64 = 1) -> [ObjectReference] {
        (0..<count).map { ObjectReference(entityIndex: 1, key: first + UInt64($0)) }
    }

    static func list(_ column: Column, at slot: Int) -> [ObjectReference]? {
        guard case .toMany(let list) = column.value(at: slot) else { return nil }
        return list
    }

    static func sameStorage(_ a: [ObjectReference], _ b: [ObjectReference]) -> Bool {
        a.withUnsafeBufferPointer { mine in b.withUnsafeBufferPointer { mine.baseAddress == $0.baseAddress } }
    }

    @Test func aLongListIsReadBackWithoutACopy() throws {
        var column = Column()
        let long = Self.targets(Column.largeListCount + 1)
        column.set(.toMany(long), at: 3)
        let read = try #require(Self.list(column, at: 3))
        #expect(read == long)
        // Before long lists had their own arrays, every read copied the list out of the shared one.
        #expect(Self.sameStorage(read, long))
        // Writing the list it holds again is recognized as no change without comparing element by element.
        let copy = column
        column.set(.toMany(read), at: 3)
        #expect(Self.sameStorage(try #require(Self.list(column, at: 3)), try #require(Self.list(copy, at: 3))))
    }

    @Test(
        "a slot's list changes between short and long lengths; the other slots keep theirs",
        arguments: [(0, 70), (3, 64), (63, 64), (64, 63), (200, 2), (100, 0), (65, 1_000)])
    func listChangesLength(from: Int, to: Int) throws {
        var column = Column()
        let neighbors = [Self.targets(5, from: 10_000), Self.targets(90, from: 20_000), Self.targets(1, from: 30_000)]
        for (slot, list) in neighbors.enumerated() { column.set(.toMany(list), at: slot * 2) }
        column.set(.toMany(Self.targets(from)), at: 1)
        #expect(Self.list(column, at: 1) == Self.targets(from))
        column.set(.toMany(Self.targets(to, from: 500)), at: 1)
        #expect(Self.list(column, at: 1) == Self.targets(to, from: 500))
        for (slot, list) in neighbors.enumerated() { #expect(Self.list(column, at: slot * 2) == list) }
        // Into another kind of value and back.
        column.set(.toOne(nil), at: 1)
        #expect(column.value(at: 1) == .toOne(nil))
        column.set(nil, at: 1)
        #expect(column.value(at: 1) == nil)
        column.set(.toMany(Self.targets(from, from: 900)), at: 1)
        #expect(Self.list(column, at: 1) == Self.targets(from, from: 900))
        for (slot, list) in neighbors.enumerated() { #expect(Self.list(column, at: slot * 2) == list) }
    }

    @Test func shortListsAreCompactedAroundLongOnes() throws {
        var column = Column()
        let long = Self.targets(500, from: 1_000_000)
        column.set(.toMany(long), at: 0)
        // Rewriting short lists many times leaves garbage in the shared array until it is compacted.
        var expected: [Int: [ObjectReference]] = [:]
        for round in 0..<200 {
            for slot in 1...8 {
                let list = Self.targets((round + slot) % 40, from: UInt64(round * 100 + slot * 1_000))
                column.set(.toMany(list), at: slot)
                expected[slot] = list
            }
            if round % 50 == 0 { column.set(.toMany(Self.targets(round + 64, from: 5)), at: 9) }
        }
        #expect(Self.list(column, at: 0) == long)
        for (slot, list) in expected { #expect(Self.list(column, at: slot) == list, "slot \(slot)") }
        #expect(Self.list(column, at: 9) == Self.targets(150 + 64, from: 5))
    }
}
