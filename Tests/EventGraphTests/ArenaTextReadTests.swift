import LogFormat
import Testing

@testable import EventGraph

/// Text read from a column's arena: an ASCII arena's strings are copied without being validated, any other arena's
/// are decoded (ill-formed sequences repaired) as before.
@Suite("Text read from an arena is the text written, validated unless the arena is ASCII")
struct ArenaTextReadTests {
    static let asciiTexts = ["", "a", "fifteen bytes..", "sixteen bytes...", String(repeating: "prose ", count: 60)]

    /// The text values of a slot, as the two read paths (a handle's static one, a row's method) decode them.
    static func reads(_ column: Column, at slot: Int) -> [AttributeValue?] {
        var column = column
        let inPlace = withUnsafePointer(to: &column) { Column.attributeValueUnlessRelationship(of: $0, at: slot) }
        guard case .attribute(let viaValue)? = column.value(at: slot) else { return [inPlace, nil] }
        return [inPlace, viaValue]
    }

    @Test("an ASCII arena's strings, URLs and decimals read back as written, marked ASCII")
    func asciiArena() {
        var column = Column()
        let values: [AttributeValue] =
            Self.asciiTexts.map { .string($0) } + [
                .url("https://example.com/a/b?c=d"), .decimal("12345678901234567.5"),
            ]
        for (slot, value) in values.enumerated() { column.set(.attribute(value), at: slot) }
        #expect(column.arena.isASCII)
        for (slot, value) in values.enumerated() {
            for read in Self.reads(column, at: slot) {
                #expect(read == value, "slot \(slot)")
                if case .string(let text)? = read, #available(macOS 26, iOS 26, watchOS 26, tvOS 26, visionOS 26, *) {
                    let isKnownASCII = text.utf8Span.isKnownASCII
                    #expect(isKnownASCII, "slot \(slot)")
                }
            }
        }
    }

    @Test("once an arena holds a byte of 0x80 or more, its texts are validated: ill-formed bytes are repaired")
    func nonASCIIArena() {
        var column = Column()
        column.set(.attribute(.string("plain ASCII text, longer than fifteen bytes")), at: 0)
        #expect(column.arena.isASCII)
        // Bytes from a damaged or hostile file: not UTF-8.
        let illFormed: [UInt8] = [0x61, 0xFF, 0x62, 0xC3]
        illFormed.withUnsafeBytes { column.set(bytes: $0, tag: .string, at: 1) }
        column.set(.attribute(.string("héllo, wörld")), at: 2)
        #expect(!column.arena.isASCII)
        let expected: [AttributeValue] = [
            .string("plain ASCII text, longer than fifteen bytes"),
            .string(String(decoding: illFormed, as: UTF8.self)), .string("héllo, wörld"),
        ]
        #expect(expected[1] == .string("a\u{FFFD}b\u{FFFD}"))
        for (slot, value) in expected.enumerated() {
            for read in Self.reads(column, at: slot) { #expect(read == value, "slot \(slot)") }
        }
    }

    @Test("an ASCII slot overwritten with non-ASCII text reads the new text, validated")
    func overwrittenSlot() {
        var column = Column()
        column.set(.attribute(.string("an ASCII title of some length")), at: 0)
        column.set(.attribute(.string("ein Titel für später, nicht ASCII")), at: 0)
        #expect(!column.arena.isASCII)
        for read in Self.reads(column, at: 0) { #expect(read == .string("ein Titel für später, nicht ASCII")) }
    }
}
