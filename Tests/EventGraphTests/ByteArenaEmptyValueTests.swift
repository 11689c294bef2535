import LogFormat
import Testing

@testable import EventGraph

/// An empty byte value after the last slot an arena stores is not stored: it reads as empty already, so a property
/// that objects leave empty costs no offsets (h91: 16 MB for the two empty image URLs of 1M demo posts).
@Suite("A byte arena stores no offsets for empty values at its end")
struct ByteArenaEmptyValueTests {
    private static func text(_ arena: ByteArena, _ slot: Int) -> String {
        arena.withBytes(at: slot) { String(decoding: $0, as: UTF8.self) }
    }

    private static func set(_ text: String, at slot: Int, in arena: inout ByteArena) {
        var text = text
        text.withUTF8 { arena.set(UnsafeRawBufferPointer($0), at: slot) }
    }

    @Test("a column of empty values keeps no offsets, and reads them back empty")
    func emptyColumn() {
        var arena = ByteArena()
        for slot in 0..<4096 { Self.set("", at: slot, in: &arena) }
        #expect(arena.starts.isEmpty)
        #expect(arena.byteCounts.isEmpty)
        #expect(arena.heapByteCount == 0)
        for slot in [0, 1, 4095] { #expect(Self.text(arena, slot) == "") }
        #expect(arena.holds(UnsafeRawBufferPointer(start: nil, count: 0), at: 17))
    }

    @Test("empty values mixed with others, overwritten and overwriting, read back as written")
    func mixed() {
        var arena = ByteArena()
        var expected: [String] = []
        for slot in 0..<300 {
            let value = slot % 3 == 0 ? "value \(slot)" : ""
            Self.set(value, at: slot, in: &arena)
            expected.append(value)
        }
        // The last value written was empty (slot 299): not stored, the offsets end at slot 297.
        #expect(arena.starts.count == 298)
        Self.set("late", at: 299, in: &arena)
        expected[299] = "late"
        Self.set("", at: 297, in: &arena)
        expected[297] = ""
        Self.set("filled", at: 1, in: &arena)
        expected[1] = "filled"
        arena.clear(at: 3)
        expected[3] = ""
        for (slot, value) in expected.enumerated() { #expect(Self.text(arena, slot) == value, "slot \(slot)") }
        #expect(Self.text(arena, 5000) == "")
    }

    @Test("a column chunk of objects whose string property is empty reads every value back")
    func chunk() {
        var chunk = ColumnChunk()
        for key in 1...100 as ClosedRange<UInt64> {
            let title: AttributeValue = key % 10 == 0 ? .string("title \(key)") : .string("")
            _ = chunk.append(key: key, version: 1, values: [.attribute(title), .attribute(.string(""))])
        }
        for slot in 0..<100 {
            let row = chunk.row(at: slot, entityIndex: 0)
            let key = row.key
            #expect(row.values[0] == .attribute(.string(key % 10 == 0 ? "title \(key)" : "")))
            #expect(row.values[1] == .attribute(.string("")))
        }
    }
}
