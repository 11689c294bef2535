import Testing

@testable import LogFormat

/// `PropertyValue.visit` lends a value to a visitor as the payload holds it: a string with what its UTF-8 check found
/// out about ASCII (so that replay does not scan its bytes again), a to-many list in a buffer (no array per list).
/// Each must be what `PropertyValue(from:)` decodes, and a bad value must fail as it does.
@Suite("Values lent by a payload's visitor: strings with their ASCII check, to-many lists in a buffer")
struct BorrowedPropertyValueTests {
    /// The value `visit` lends for `value`'s encoding, as a description of its case, and `materialized`.
    private static func lent(_ value: PropertyValue, foreignStoreCount: Int = 0) throws -> (String, PropertyValue) {
        var writer = ByteWriter()
        try value.encode(to: &writer, foreignStoreCount: foreignStoreCount)
        return try ByteReader.withReader(over: writer.bytes) { (reader) throws(LogFormatError) in
            var lent: (String, PropertyValue)?
            try PropertyValue.visit(from: &reader, foreignStoreCount: foreignStoreCount) { borrowed in
                let shape =
                    switch borrowed {
                    case .value: "value"
                    case .bytes(_, _, let isASCII): "bytes, isASCII \(isASCII.map(String.init) ?? "unknown")"
                    case .toMany(let targets): "toMany \(targets.count)"
                    }
                lent = (shape, borrowed.materialized)
            }
            #expect(reader.isAtEnd)
            return lent!
        }
    }

    @Test("a string lends whether it is ASCII; a binary value leaves it unknown")
    func asciiOfStrings() throws {
        let cases: [(PropertyValue, String)] = [
            (.attribute(.string("plain text")), "bytes, isASCII true"),
            (.attribute(.string("")), "bytes, isASCII true"),
            (.attribute(.string("crème brûlée")), "bytes, isASCII false"),
            (.attribute(.url("https://example.com/é")), "bytes, isASCII false"),
            (.attribute(.decimal("12.5")), "bytes, isASCII true"),
            (.attribute(.binary([1, 2, 3])), "bytes, isASCII unknown"),
            (.attribute(.binary([0xC3, 0xA9])), "bytes, isASCII unknown"),
        ]
        for (value, shape) in cases {
            let (lentShape, materialized) = try Self.lent(value)
            #expect(lentShape == shape, "\(value)")
            #expect(materialized == value)
        }
    }

    @Test("a to-many list is lent in a buffer holding the targets `PropertyValue(from:)` decodes")
    func toManyLists() throws {
        let long = (0..<300).map { ObjectReference(entityIndex: UInt32($0 % 3), key: UInt64($0) * 977 + 5) }
        let cases: [[ObjectReference]] = [
            [],
            [ObjectReference(entityIndex: 2, key: 7)],
            [ObjectReference(storeIndex: 1, entityIndex: 0, key: 1), ObjectReference(entityIndex: 4, key: 1 << 40)],
            long,
        ]
        for targets in cases {
            let (shape, materialized) = try Self.lent(.toMany(targets), foreignStoreCount: 1)
            #expect(shape == "toMany \(targets.count)")
            #expect(materialized == .toMany(targets))
        }
        // A to-one value is still decoded whole.
        let (shape, _) = try Self.lent(.toOne(ObjectReference(entityIndex: 1, key: 3)))
        #expect(shape == "value")
    }

    @Test("a to-many list that is cut short or names an unknown store fails as `PropertyValue(from:)` fails")
    func badLists() throws {
        var writer = ByteWriter()
        try PropertyValue.toMany([ObjectReference(entityIndex: 1, key: 300), ObjectReference(entityIndex: 1, key: 301)])
            .encode(to: &writer, foreignStoreCount: 0)
        let whole = writer.bytes
        var inputs: [([UInt8], Int)] = (1..<whole.count).map { (Array(whole.prefix($0)), 0) }
        // A count far beyond the bytes that follow, and a reference to a foreign store the payload does not list.
        inputs.append(([0x22, 0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x01, 0x01], 0))
        var foreign = ByteWriter()
        try PropertyValue.toMany([ObjectReference(storeIndex: 1, entityIndex: 0, key: 1)])
            .encode(to: &foreign, foreignStoreCount: 1)
        inputs.append((foreign.bytes, 0))
        for (bytes, foreignStoreCount) in inputs {
            let expected = Result { () throws(LogFormatError) in
                try ByteReader.withReader(over: bytes) { (reader) throws(LogFormatError) in
                    _ = try PropertyValue(from: &reader, foreignStoreCount: foreignStoreCount)
                }
            }
            let visited = Result { () throws(LogFormatError) in
                try ByteReader.withReader(over: bytes) { (reader) throws(LogFormatError) in
                    try PropertyValue.visit(from: &reader, foreignStoreCount: foreignStoreCount) { _ in }
                }
            }
            guard case .failure(let expectedError) = expected else {
                Issue.record("\(bytes) decodes")
                continue
            }
            guard case .failure(let error) = visited else {
                Issue.record("\(bytes) is visited without an error")
                continue
            }
            #expect(error.description == expectedError.description, "\(bytes)")
        }
    }
}
