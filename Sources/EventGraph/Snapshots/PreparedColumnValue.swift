import LogFormat

/// A property value prepared once for being written into many slots (a replayed insert's defaults): the common
/// defaults as a tag, a bit pattern or bytes, anything else (a UUID, a relationship with targets) as the value.
enum PreparedColumnValue: Sendable {
    /// A value that is its tag alone: null, or a to-one relationship without a target.
    case tag(ValueTag)
    /// A fixed-width value (see ``AttributeValue/fixedWidthEncoding``).
    case word(ValueTag, UInt64)
    /// A byte value (a string's UTF-8, a binary's bytes).
    case bytes(ValueTag, [UInt8])
    /// An empty to-many list.
    case emptyMany
    /// Any other value, written as ``Column/set(_:at:)-(PropertyValue?,_)`` writes it.
    case value(PropertyValue)

    init(_ value: PropertyValue) {
        switch value {
        case .attribute(let attribute):
            if let (tag, word) = attribute.fixedWidthEncoding {
                self = .word(tag, word)
            } else if let (tag, bytes) = attribute.withBytesEncoding({ ($0, Array($1)) }) {
                self = .bytes(tag, bytes)
            } else if case .null = attribute {
                self = .tag(.null)
            } else {
                self = .value(value)
            }
        case .toOne(nil): self = .tag(.toOneNil)
        case .toMany(let list) where list.isEmpty: self = .emptyMany
        default: self = .value(value)
        }
    }
}
