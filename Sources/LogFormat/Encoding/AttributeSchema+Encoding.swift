// An attribute, in this order:
//   name string · type u8 (an `AttributeType` raw value) · flags u8 ·
//   default value (an encoded `AttributeValue`, only with flag 0x04) ·
//   external storage threshold varuint (only with flag 0x08) · transformer name string (only with flag 0x10) ·
//   original name string (only with flag 0x20; schema payload version 2).

extension AttributeSchema {
    /// The bits of an attribute's flags byte; the others must be zero.
    enum Flag {
        static let isOptional: UInt8 = 0x01
        static let isTransient: UInt8 = 0x02
        static let hasDefaultValue: UInt8 = 0x04
        static let hasExternalStorageThreshold: UInt8 = 0x08
        static let hasTransformerName: UInt8 = 0x10
        static let hasOriginalName: UInt8 = 0x20
        static let known: UInt8 =
            isOptional | isTransient | hasDefaultValue | hasExternalStorageThreshold | hasTransformerName

        /// The known bits of a schema payload of a version (original names came with version 2).
        static func known(allowsOriginalNames: Bool) -> UInt8 {
            allowsOriginalNames ? known | hasOriginalName : known
        }
    }

    /// Appends the attribute's fields (after the property kind byte).
    func encode(to writer: inout ByteWriter) throws(LogFormatError) {
        try writer.writeString(name, field: "an attribute name")
        writer.writeUInt8(type.rawValue)
        var flags: UInt8 = 0
        if isOptional { flags |= Flag.isOptional }
        if isTransient { flags |= Flag.isTransient }
        if defaultValue != nil { flags |= Flag.hasDefaultValue }
        if externalStorageThreshold != nil { flags |= Flag.hasExternalStorageThreshold }
        if transformerName != nil { flags |= Flag.hasTransformerName }
        if originalName != nil { flags |= Flag.hasOriginalName }
        writer.writeUInt8(flags)
        if let defaultValue { try defaultValue.encode(to: &writer) }
        if let externalStorageThreshold { writer.writeVarUInt(externalStorageThreshold) }
        if let transformerName {
            try writer.writeString(transformerName, field: "the transformer name of attribute '\(name)'")
        }
        if let originalName { try writer.writeString(originalName, field: "the original name of '\(name)'") }
    }

    /// Reads the attribute's fields (after the property kind byte).
    init(from reader: inout ByteReader, allowsOriginalNames: Bool) throws(LogFormatError) {
        let name = try reader.readString("an attribute name")
        let typeOffset = reader.offset
        let rawType = try reader.readUInt8("an attribute type")
        guard let type = AttributeType(rawValue: rawType) else {
            throw reader.malformed(
                "attribute '\(name)' has unknown attribute type 0x\(String(rawType, radix: 16))", at: typeOffset)
        }
        let flagsOffset = reader.offset
        let flags = try reader.readUInt8("an attribute's flags")
        let known = Flag.known(allowsOriginalNames: allowsOriginalNames)
        guard flags & ~known == 0 else {
            throw reader.malformed(
                "attribute '\(name)' has unknown flag bits 0x\(String(flags & ~known, radix: 16))",
                at: flagsOffset)
        }
        let defaultValue = flags & Flag.hasDefaultValue != 0 ? try AttributeValue(from: &reader) : nil
        let threshold =
            flags & Flag.hasExternalStorageThreshold != 0
            ? try reader.readVarUInt("an external storage threshold") : nil
        let transformerName =
            flags & Flag.hasTransformerName != 0 ? try reader.readString("a transformer name") : nil
        let originalName = flags & Flag.hasOriginalName != 0 ? try reader.readString("an original name") : nil
        self.init(
            name: name, type: type, isOptional: flags & Flag.isOptional != 0,
            isTransient: flags & Flag.isTransient != 0, defaultValue: defaultValue,
            externalStorageThreshold: threshold, transformerName: transformerName, originalName: originalName)
    }
}
