// A property is one kind byte (0x01 attribute, 0x02 relationship) followed by the attribute's or relationship's
// fields (see `AttributeSchema+Encoding.swift` and `RelationshipSchema+Encoding.swift`).

extension PropertySchema {
    /// The kind byte that starts an encoded property.
    enum EncodingTag: UInt8 {
        case attribute = 0x01
        case relationship = 0x02
    }

    /// The fewest bytes an encoded property takes: an attribute with kind, empty name, type and flags.
    static let minimumEncodedByteCount = 4

    /// Appends the kind byte and the fields.
    func encode(to writer: inout ByteWriter) throws(LogFormatError) {
        switch self {
        case .attribute(let attribute):
            writer.writeUInt8(EncodingTag.attribute.rawValue)
            try attribute.encode(to: &writer)
        case .relationship(let relationship):
            writer.writeUInt8(EncodingTag.relationship.rawValue)
            try relationship.encode(to: &writer)
        }
    }

    /// Reads the kind byte and the property it introduces.
    init(from reader: inout ByteReader, allowsOriginalNames: Bool) throws(LogFormatError) {
        let tagOffset = reader.offset
        let tag = try reader.readUInt8("a property's kind")
        switch EncodingTag(rawValue: tag) {
        case .attribute: self = .attribute(try AttributeSchema(from: &reader, allowsOriginalNames: allowsOriginalNames))
        case .relationship:
            self = .relationship(try RelationshipSchema(from: &reader, allowsOriginalNames: allowsOriginalNames))
        case nil: throw reader.malformed("unknown property kind 0x\(String(tag, radix: 16))", at: tagOffset)
        }
    }
}
