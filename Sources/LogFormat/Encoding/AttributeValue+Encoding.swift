// The encoding of attribute values: one tag byte, then the value. Tags 0x00–0x1F are reserved for attribute
// values, so that a property value (``PropertyValue``) can share the tag byte with the attribute value it holds.

extension AttributeValue {
    /// The tag byte that starts an encoded attribute value.
    enum EncodingTag: UInt8, CaseIterable {
        case null = 0x00
        case int16 = 0x01
        case int32 = 0x02
        case int64 = 0x03
        case double = 0x04
        case float = 0x05
        case boolFalse = 0x06
        case boolTrue = 0x07
        case string = 0x08
        case date = 0x09
        case uuid = 0x0A
        case url = 0x0B
        case decimal = 0x0C
        case binary = 0x0D
        case transformable = 0x0E
        case blob = 0x0F

        /// The largest tag value reserved for attribute values (new kinds of values get tags up to here).
        static let reservedRangeUpperBound: UInt8 = 0x1F
    }

    /// The fewest bytes an encoded attribute value takes (a tag without a value).
    static let minimumEncodedByteCount = 1

    /// Appends the tag byte and the value.
    ///
    /// - Throws: ``LogFormatError/Code/limitExceeded`` when a string or byte array is over its limit.
    func encode(to writer: inout ByteWriter) throws(LogFormatError) {
        switch self {
        case .null:
            writer.writeUInt8(EncodingTag.null.rawValue)
        case .int16(let value):
            writer.writeUInt8(EncodingTag.int16.rawValue)
            writer.writeVarInt(Int64(value))
        case .int32(let value):
            writer.writeUInt8(EncodingTag.int32.rawValue)
            writer.writeVarInt(Int64(value))
        case .int64(let value):
            writer.writeUInt8(EncodingTag.int64.rawValue)
            writer.writeVarInt(value)
        case .double(let value):
            writer.writeUInt8(EncodingTag.double.rawValue)
            writer.writeUInt64LE(value.bitPattern)
        case .float(let value):
            writer.writeUInt8(EncodingTag.float.rawValue)
            writer.writeUInt32LE(value.bitPattern)
        case .bool(let value):
            writer.writeUInt8(value ? EncodingTag.boolTrue.rawValue : EncodingTag.boolFalse.rawValue)
        case .string(let value):
            writer.writeUInt8(EncodingTag.string.rawValue)
            try writer.writeString(value, field: "a string attribute value")
        case .date(let value):
            writer.writeUInt8(EncodingTag.date.rawValue)
            writer.writeUInt64LE(value.bitPattern)
        case .uuid(let value):
            writer.writeUInt8(EncodingTag.uuid.rawValue)
            writer.writeUUID(value)
        case .url(let value):
            writer.writeUInt8(EncodingTag.url.rawValue)
            try writer.writeString(value, field: "a URL attribute value")
        case .decimal(let value):
            writer.writeUInt8(EncodingTag.decimal.rawValue)
            try writer.writeString(value, field: "a decimal attribute value")
        case .binary(let value):
            writer.writeUInt8(EncodingTag.binary.rawValue)
            try writer.writeByteArray(value, field: "a binary attribute value")
        case .transformable(let value):
            writer.writeUInt8(EncodingTag.transformable.rawValue)
            try writer.writeByteArray(value, field: "a transformable attribute value")
        case .blob(let reference):
            writer.writeUInt8(EncodingTag.blob.rawValue)
            writer.writeVarUInt(reference.transactionID)
            writer.writeVarUInt(UInt64(reference.index))
            writer.writeVarUInt(reference.byteCount)
        }
    }

    /// At least the byte count of ``encode(to:)`` (a varint counted at its longest), without encoding the value.
    var estimatedEncodedByteCount: Int {
        switch self {
        case .string(let value), .url(let value), .decimal(let value): 11 + value.utf8.count
        case .binary(let value), .transformable(let value): 11 + value.count
        case .uuid: 17
        case .blob: 31
        default: 11
        }
    }

    /// Reads a tag byte and the value it introduces.
    init(from reader: inout ByteReader) throws(LogFormatError) {
        let tagOffset = reader.offset
        let tag = try reader.readUInt8("an attribute value's tag")
        try self.init(tag: tag, at: tagOffset, from: &reader)
    }

    /// Reads the value introduced by `tag`, which was read at byte offset `tagOffset`.
    init(tag: UInt8, at tagOffset: Int, from reader: inout ByteReader) throws(LogFormatError) {
        guard let known = EncodingTag(rawValue: tag) else {
            throw reader.malformed("unknown attribute value tag 0x\(String(tag, radix: 16))", at: tagOffset)
        }
        switch known {
        case .null:
            self = .null
        case .int16:
            let value = try reader.readVarInt("an Int16 value")
            guard let narrow = Int16(exactly: value) else {
                throw reader.malformed("the Int16 value \(value) is out of range", at: tagOffset)
            }
            self = .int16(narrow)
        case .int32:
            let value = try reader.readVarInt("an Int32 value")
            guard let narrow = Int32(exactly: value) else {
                throw reader.malformed("the Int32 value \(value) is out of range", at: tagOffset)
            }
            self = .int32(narrow)
        case .int64:
            self = .int64(try reader.readVarInt("an Int64 value"))
        case .double:
            self = .double(Double(bitPattern: try reader.readUInt64LE("a Double value")))
        case .float:
            self = .float(Float(bitPattern: try reader.readUInt32LE("a Float value")))
        case .boolFalse:
            self = .bool(false)
        case .boolTrue:
            self = .bool(true)
        case .string:
            self = .string(try reader.readString("a string value"))
        case .date:
            self = .date(Double(bitPattern: try reader.readUInt64LE("a date value")))
        case .uuid:
            self = .uuid(try reader.readUUID("a UUID value"))
        case .url:
            self = .url(try reader.readString("a URL value"))
        case .decimal:
            self = .decimal(try reader.readString("a decimal value"))
        case .binary:
            self = .binary(try reader.readByteArray("a binary value"))
        case .transformable:
            self = .transformable(try reader.readByteArray("a transformable value"))
        case .blob:
            let transactionID = try reader.readVarUInt("a blob reference's transaction ID")
            let index = try reader.readVarUInt32("a blob reference's index")
            let byteCount = try reader.readVarUInt("a blob reference's byte count")
            self = .blob(BlobReference(transactionID: transactionID, index: index, byteCount: byteCount))
        }
    }
}
