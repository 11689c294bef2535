// An operation is one tag byte, then the object reference, then the fields of its kind.

extension ChangeOperation {
    /// The tag byte that starts an encoded operation. Zero is not a tag, so that a run of zero bytes never decodes.
    enum EncodingTag: UInt8 {
        /// Fields: object reference, property changes.
        case insert = 0x01
        /// Fields: object reference, property changes.
        case update = 0x02
        /// Fields: object reference, property index, added references, removed references.
        case relate = 0x03
        /// Fields: object reference.
        case delete = 0x04
    }

    /// The fewest bytes an encoded operation takes (a delete: tag and a three-byte reference).
    static let minimumEncodedByteCount = 1 + ObjectReference.minimumEncodedByteCount

    /// Appends the tag byte and the fields.
    func encode(to writer: inout ByteWriter, foreignStoreCount: Int) throws(LogFormatError) {
        switch self {
        case .insert(let object, let changes):
            writer.writeUInt8(EncodingTag.insert.rawValue)
            try object.encode(to: &writer, foreignStoreCount: foreignStoreCount)
            try PropertyChange.encodeList(changes, to: &writer, foreignStoreCount: foreignStoreCount)
        case .update(let object, let changes):
            writer.writeUInt8(EncodingTag.update.rawValue)
            try object.encode(to: &writer, foreignStoreCount: foreignStoreCount)
            try PropertyChange.encodeList(changes, to: &writer, foreignStoreCount: foreignStoreCount)
        case .relate(let object, let propertyIndex, let added, let removed):
            writer.writeUInt8(EncodingTag.relate.rawValue)
            try object.encode(to: &writer, foreignStoreCount: foreignStoreCount)
            guard Int(propertyIndex) < LogLimits.maxPropertyCount else {
                throw LogFormatError(
                    .limitExceeded,
                    "a relate operation has property index \(propertyIndex), not below the limit of "
                        + "\(LogLimits.maxPropertyCount) properties")
            }
            writer.writeVarUInt(UInt64(propertyIndex))
            try ObjectReference.encodeList(
                added, to: &writer, foreignStoreCount: foreignStoreCount, field: "the added targets of a relate")
            try ObjectReference.encodeList(
                removed, to: &writer, foreignStoreCount: foreignStoreCount, field: "the removed targets of a relate")
        case .delete(let object):
            writer.writeUInt8(EncodingTag.delete.rawValue)
            try object.encode(to: &writer, foreignStoreCount: foreignStoreCount)
        }
    }
}
