// A property change is the property index (an unsigned varint) followed by the encoded property value.

extension PropertyChange {
    /// The fewest bytes an encoded property change takes (a one-byte index and a one-byte value).
    static let minimumEncodedByteCount = 2

    /// Appends the property index and the value.
    ///
    /// - Throws: ``LogFormatError/Code/limitExceeded`` when the index is not below ``LogLimits/maxPropertyCount``
    ///   or the value is over a limit; ``LogFormatError/Code/invalidArgument`` for a reference to an unknown store.
    func encode(to writer: inout ByteWriter, foreignStoreCount: Int) throws(LogFormatError) {
        guard Int(propertyIndex) < LogLimits.maxPropertyCount else {
            throw LogFormatError(
                .limitExceeded,
                "property index \(propertyIndex) is not below the limit of \(LogLimits.maxPropertyCount) properties")
        }
        writer.writeVarUInt(UInt64(propertyIndex))
        try value.encode(to: &writer, foreignStoreCount: foreignStoreCount)
    }

    /// Reads the property index and the value.
    init(from reader: inout ByteReader, foreignStoreCount: Int) throws(LogFormatError) {
        let propertyIndex = try reader.readIndex("a property index", below: LogLimits.maxPropertyCount)
        let value = try PropertyValue(from: &reader, foreignStoreCount: foreignStoreCount)
        self.init(propertyIndex: propertyIndex, value: value)
    }

    /// Appends a count and the changes.
    static func encodeList(
        _ changes: [PropertyChange], to writer: inout ByteWriter, foreignStoreCount: Int
    ) throws(LogFormatError) {
        try writer.writeCount(changes.count, limit: LogLimits.maxPropertyCount, field: "a list of property values")
        for change in changes {
            try change.encode(to: &writer, foreignStoreCount: foreignStoreCount)
        }
    }

    /// Reads a count and that many changes.
    static func decodeList(from reader: inout ByteReader, foreignStoreCount: Int) throws(LogFormatError)
        -> [PropertyChange]
    {
        let count = try reader.readCount(
            "the number of property values", limit: LogLimits.maxPropertyCount,
            minimumElementByteCount: minimumEncodedByteCount)
        var changes: [PropertyChange] = []
        changes.reserveCapacity(count)
        for _ in 0..<count {
            changes.append(try PropertyChange(from: &reader, foreignStoreCount: foreignStoreCount))
        }
        return changes
    }
}
