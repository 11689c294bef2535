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

    /// Appends a count and the changes.
    static func encodeList(
        _ changes: [PropertyChange], to writer: inout ByteWriter, foreignStoreCount: Int
    ) throws(LogFormatError) {
        try writer.writeCount(changes.count, limit: LogLimits.maxPropertyCount, field: "a list of property values")
        // By position: a change is encoded where it is, not copied (its value retained) first.
        for position in changes.indices {
            try changes[position].encode(to: &writer, foreignStoreCount: foreignStoreCount)
        }
    }
}
