// An entity, in this order:
//   name string · flags u8 · superentityName string (only when flag 0x02 is set) ·
//   originalName string (only when flag 0x04 is set; schema payload version 2) ·
//   property count varuint, then properties (see `PropertySchema+Encoding.swift`) ·
//   uniqueness constraint count varuint, then name lists · index count varuint, then name lists.
// A name list is a count varuint, then that many strings.

extension EntitySchema {
    /// The bits of an entity's flags byte; the others must be zero.
    enum Flag {
        static let isAbstract: UInt8 = 0x01
        static let hasSuperentity: UInt8 = 0x02
        static let hasOriginalName: UInt8 = 0x04
        static let known: UInt8 = isAbstract | hasSuperentity

        /// The known bits of a schema payload of a version (original names came with version 2).
        static func known(allowsOriginalNames: Bool) -> UInt8 {
            allowsOriginalNames ? known | hasOriginalName : known
        }
    }

    /// The fewest bytes an encoded entity takes: an empty name, flags, and three empty lists.
    static let minimumEncodedByteCount = 5

    /// Appends the entity.
    func encode(to writer: inout ByteWriter) throws(LogFormatError) {
        try writer.writeString(name, field: "an entity name")
        var flags: UInt8 = 0
        if isAbstract { flags |= Flag.isAbstract }
        if superentityName != nil { flags |= Flag.hasSuperentity }
        if originalName != nil { flags |= Flag.hasOriginalName }
        writer.writeUInt8(flags)
        if let superentityName {
            try writer.writeString(superentityName, field: "the superentity name of '\(name)'")
        }
        if let originalName { try writer.writeString(originalName, field: "the original name of '\(name)'") }
        try writer.writeCount(
            properties.count, limit: LogLimits.maxPropertyCount, field: "the properties of '\(name)'")
        for property in properties {
            try property.encode(to: &writer)
        }
        try EntitySchema.encodeNameLists(
            uniquenessConstraints, to: &writer, field: "the uniqueness constraints of '\(name)'")
        try EntitySchema.encodeNameLists(indexes, to: &writer, field: "the indexes of '\(name)'")
    }

    /// Reads an entity.
    init(from reader: inout ByteReader, allowsOriginalNames: Bool) throws(LogFormatError) {
        let name = try reader.readString("an entity name")
        let flagsOffset = reader.offset
        let flags = try reader.readUInt8("an entity's flags")
        let known = Flag.known(allowsOriginalNames: allowsOriginalNames)
        guard flags & ~known == 0 else {
            throw reader.malformed(
                "entity '\(name)' has unknown flag bits 0x\(String(flags & ~known, radix: 16))", at: flagsOffset)
        }
        let superentityName =
            flags & Flag.hasSuperentity != 0 ? try reader.readString("a superentity name") : nil
        let originalName = flags & Flag.hasOriginalName != 0 ? try reader.readString("an original name") : nil
        let propertyCount = try reader.readCount(
            "the number of properties", limit: LogLimits.maxPropertyCount,
            minimumElementByteCount: PropertySchema.minimumEncodedByteCount)
        var properties: [PropertySchema] = []
        properties.reserveCapacity(propertyCount)
        for _ in 0..<propertyCount {
            properties.append(try PropertySchema(from: &reader, allowsOriginalNames: allowsOriginalNames))
        }
        let uniquenessConstraints = try EntitySchema.decodeNameLists(
            from: &reader, "the number of uniqueness constraints")
        let indexes = try EntitySchema.decodeNameLists(from: &reader, "the number of indexes")
        self.init(
            name: name, superentityName: superentityName, isAbstract: flags & Flag.isAbstract != 0,
            properties: properties, uniquenessConstraints: uniquenessConstraints, indexes: indexes,
            originalName: originalName)
    }

    private static func encodeNameLists(
        _ lists: [[String]], to writer: inout ByteWriter, field: @autoclosure () -> String
    ) throws(LogFormatError) {
        try writer.writeCount(lists.count, field: field())
        for list in lists {
            try writer.writeCount(list.count, limit: LogLimits.maxPropertyCount, field: field())
            for name in list {
                try writer.writeString(name, field: field())
            }
        }
    }

    private static func decodeNameLists(
        from reader: inout ByteReader, _ field: StaticString
    ) throws(LogFormatError) -> [[String]] {
        let listCount = try reader.readCount(field, minimumElementByteCount: 1)
        var lists: [[String]] = []
        lists.reserveCapacity(listCount)
        for _ in 0..<listCount {
            let nameCount = try reader.readCount(
                "the number of property names", limit: LogLimits.maxPropertyCount, minimumElementByteCount: 1)
            var names: [String] = []
            names.reserveCapacity(nameCount)
            for _ in 0..<nameCount {
                names.append(try reader.readString("a property name"))
            }
            lists.append(names)
        }
        return lists
    }
}
