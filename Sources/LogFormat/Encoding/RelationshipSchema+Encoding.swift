// A relationship, in this order:
//   name string · destinationEntityName string · flags u8 · inverseName string (only with flag 0x08) ·
//   deleteRule u8 (a `DeleteRule` raw value) · minCount varuint · maxCount varuint (both at most 2^32 − 1) ·
//   originalName string (only with flag 0x10; schema payload version 2).

extension RelationshipSchema {
    /// The bits of a relationship's flags byte; the others must be zero.
    enum Flag {
        static let isToMany: UInt8 = 0x01
        static let isOrdered: UInt8 = 0x02
        static let isOptional: UInt8 = 0x04
        static let hasInverse: UInt8 = 0x08
        static let hasOriginalName: UInt8 = 0x10
        static let known: UInt8 = isToMany | isOrdered | isOptional | hasInverse

        /// The known bits of a schema payload of a version (original names came with version 2).
        static func known(allowsOriginalNames: Bool) -> UInt8 {
            allowsOriginalNames ? known | hasOriginalName : known
        }
    }

    /// Appends the relationship's fields (after the property kind byte).
    func encode(to writer: inout ByteWriter) throws(LogFormatError) {
        try writer.writeString(name, field: "a relationship name")
        try writer.writeString(destinationEntityName, field: "the destination entity name of '\(name)'")
        var flags: UInt8 = 0
        if isToMany { flags |= Flag.isToMany }
        if isOrdered { flags |= Flag.isOrdered }
        if isOptional { flags |= Flag.isOptional }
        if inverseName != nil { flags |= Flag.hasInverse }
        if originalName != nil { flags |= Flag.hasOriginalName }
        writer.writeUInt8(flags)
        if let inverseName { try writer.writeString(inverseName, field: "the inverse name of '\(name)'") }
        writer.writeUInt8(deleteRule.rawValue)
        writer.writeVarUInt(UInt64(minCount))
        writer.writeVarUInt(UInt64(maxCount))
        if let originalName { try writer.writeString(originalName, field: "the original name of '\(name)'") }
    }

    /// Reads the relationship's fields (after the property kind byte).
    init(from reader: inout ByteReader, allowsOriginalNames: Bool) throws(LogFormatError) {
        let name = try reader.readString("a relationship name")
        let destinationEntityName = try reader.readString("a destination entity name")
        let flagsOffset = reader.offset
        let flags = try reader.readUInt8("a relationship's flags")
        let known = Flag.known(allowsOriginalNames: allowsOriginalNames)
        guard flags & ~known == 0 else {
            throw reader.malformed(
                "relationship '\(name)' has unknown flag bits 0x\(String(flags & ~known, radix: 16))",
                at: flagsOffset)
        }
        let inverseName = flags & Flag.hasInverse != 0 ? try reader.readString("an inverse name") : nil
        let ruleOffset = reader.offset
        let rawRule = try reader.readUInt8("a delete rule")
        guard let deleteRule = DeleteRule(rawValue: rawRule) else {
            throw reader.malformed("relationship '\(name)' has unknown delete rule \(rawRule)", at: ruleOffset)
        }
        let minCount = try reader.readVarUInt32("a relationship's minimum count")
        let maxCount = try reader.readVarUInt32("a relationship's maximum count")
        let originalName = flags & Flag.hasOriginalName != 0 ? try reader.readString("an original name") : nil
        self.init(
            name: name, destinationEntityName: destinationEntityName, inverseName: inverseName,
            isToMany: flags & Flag.isToMany != 0, isOrdered: flags & Flag.isOrdered != 0,
            isOptional: flags & Flag.isOptional != 0, deleteRule: deleteRule, minCount: minCount, maxCount: maxCount,
            originalName: originalName)
    }
}
