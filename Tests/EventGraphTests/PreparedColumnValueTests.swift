import Foundation
import LogFormat
import Testing

@testable import EventGraph

@Suite("A replayed insert's defaults, prepared once, write what their values write")
struct PreparedColumnValueTests {
    static let references = (1...70).map { ObjectReference(entityIndex: 1, key: UInt64($0)) }

    /// Values of every storage: tag-only, fixed-width, bytes, others, and relationships short and long.
    static let values: [PropertyValue?] = [
        nil, .attribute(.null), .attribute(.int16(-3)), .attribute(.int32(7)), .attribute(.int64(1 << 40)),
        .attribute(.double(2.5)), .attribute(.float(-1.5)), .attribute(.bool(true)), .attribute(.bool(false)),
        .attribute(.date(1_000)), .attribute(.string("")), .attribute(.string("héllo")),
        .attribute(.binary([1, 2, 3])), .attribute(.binary([])), .attribute(.url("https://a.example")),
        .attribute(.uuid(LogUUID(high: 0xE621_E1F8, low: 7))),
        .toOne(nil), .toOne(references[0]), .toMany([]), .toMany(Array(references.prefix(3))),
        .toMany(references),
    ]

    @Test("every default over every old value of a slot, new slots and rewritten ones")
    func sameAsPropertyValues() {
        for defaultValue in Self.values.compactMap({ $0 }) {
            let prepared = PreparedColumnValue(defaultValue)
            for old in Self.values {
                var plain = Column()
                // Slots 0 and 1 hold something first; slot 1 gets the default, slot 2 is new.
                for slot in 0..<2 { plain.set(old, at: slot) }
                var viaPrepared = plain
                plain.set(defaultValue, at: 1)
                viaPrepared.set(prepared, at: 1)
                plain.set(defaultValue, at: 2)
                viaPrepared.set(prepared, at: 2)
                for slot in 0..<3 {
                    #expect(
                        plain.tag(at: slot) == viaPrepared.tag(at: slot)
                            && plain.value(at: slot) == viaPrepared.value(at: slot),
                        "default \(defaultValue) over \(String(describing: old)), slot \(slot)")
                }
            }
        }
    }

    @Test("the common defaults are prepared without the value; the others keep it")
    func preparedForms() {
        func isValue(_ prepared: PreparedColumnValue) -> Bool {
            if case .value = prepared { return true }
            return false
        }
        #expect(!isValue(PreparedColumnValue(.attribute(.null))))
        #expect(!isValue(PreparedColumnValue(.attribute(.int64(5)))))
        #expect(!isValue(PreparedColumnValue(.toOne(nil))))
        #expect(!isValue(PreparedColumnValue(.toMany([]))))
        #expect(!isValue(PreparedColumnValue(.attribute(.string("a")))))
        #expect(!isValue(PreparedColumnValue(.attribute(.binary([])))))
        #expect(isValue(PreparedColumnValue(.attribute(.uuid(LogUUID(high: 1, low: 2))))))
        #expect(isValue(PreparedColumnValue(.toMany(Array(Self.references.prefix(1))))))
    }
}
