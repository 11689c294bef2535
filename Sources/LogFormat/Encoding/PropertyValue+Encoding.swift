// A property value is one tag byte followed by its fields. Tags 0x00–0x1F are attribute values: the tag is the
// attribute value's own tag (see `AttributeValue+Encoding.swift`), so an attribute costs no extra byte. Tags from
// 0x20 are relationship values.

extension PropertyValue {
    /// The tag bytes of relationship values; attribute values use ``AttributeValue/EncodingTag``.
    enum RelationshipTag: UInt8 {
        /// A to-one relationship set to no object; no fields follow.
        case toOneNone = 0x20
        /// A to-one relationship set to an object; an ``ObjectReference`` follows.
        case toOne = 0x21
        /// The complete contents of a to-many relationship: a count, then that many references.
        case toMany = 0x22
    }

    /// The fewest bytes an encoded property value takes (a tag without fields).
    static let minimumEncodedByteCount = 1

    /// Appends the tag byte and the fields.
    func encode(to writer: inout ByteWriter, foreignStoreCount: Int) throws(LogFormatError) {
        switch self {
        case .attribute(let value):
            try value.encode(to: &writer)
        case .toOne(nil):
            writer.writeUInt8(RelationshipTag.toOneNone.rawValue)
        case .toOne(let reference?):
            writer.writeUInt8(RelationshipTag.toOne.rawValue)
            try reference.encode(to: &writer, foreignStoreCount: foreignStoreCount)
        case .toMany(let references):
            writer.writeUInt8(RelationshipTag.toMany.rawValue)
            try ObjectReference.encodeList(
                references, to: &writer, foreignStoreCount: foreignStoreCount, field: "a to-many value")
        }
    }

    /// Reads a tag byte and the value it introduces.
    init(from reader: inout ByteReader, foreignStoreCount: Int) throws(LogFormatError) {
        let tagOffset = reader.offset
        let tag = try reader.readUInt8("a property value's tag")
        if tag <= AttributeValue.EncodingTag.reservedRangeUpperBound {
            self = .attribute(try AttributeValue(tag: tag, at: tagOffset, from: &reader))
            return
        }
        try self.init(relationshipTag: tag, at: tagOffset, from: &reader, foreignStoreCount: foreignStoreCount)
    }

    /// Reads the fields of a relationship value whose tag (above the attribute tags) was read at `tagOffset`.
    init(relationshipTag tag: UInt8, at tagOffset: Int, from reader: inout ByteReader, foreignStoreCount: Int)
        throws(LogFormatError)
    {
        switch RelationshipTag(rawValue: tag) {
        case .toOneNone:
            self = .toOne(nil)
        case .toOne:
            self = .toOne(try ObjectReference(from: &reader, foreignStoreCount: foreignStoreCount))
        case .toMany:
            self = .toMany(
                try ObjectReference.decodeList(
                    from: &reader, foreignStoreCount: foreignStoreCount, "the number of to-many targets"))
        case nil:
            throw reader.malformed("unknown property value tag 0x\(String(tag, radix: 16))", at: tagOffset)
        }
    }
}
