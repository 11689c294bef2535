/// An option of an ``Attribute``: uniqueness, indexing, transience, external storage or a validation rule.
///
/// ```swift
/// @Attribute(.unique) var identity: Int64 = 0
/// @Attribute(.length(1...200)) var title: String = ""
/// @Attribute(.externalStorage) var image: Data? = nil
/// ```
public struct AttributeOption: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case unique
        case indexed
        case transient
        case externalStorage(threshold: Int)
        case range(minimum: Double?, maximum: Double?)
        case length(minimum: Int?, maximum: Int?)
        case pattern(String)
        case originalName(String)
    }

    let kind: Kind

    /// No two objects of the entity (and its sub-entities) may have the same value; also indexes the attribute.
    public static let unique = AttributeOption(kind: .unique)
    /// Keeps a sorted index so that equality and range predicates avoid a full scan.
    public static let indexed = AttributeOption(kind: .indexed)
    /// The value lives only in memory, in the object; it is never written to the log.
    public static let transient = AttributeOption(kind: .transient)
    /// Binary values of at least ``defaultExternalStorageThreshold`` bytes are kept in the log and read on demand.
    public static let externalStorage = AttributeOption(
        kind: .externalStorage(threshold: defaultExternalStorageThreshold))
    /// The threshold that ``externalStorage`` uses: 4 KiB.
    public static let defaultExternalStorageThreshold = 4096

    /// Binary values of at least `byteCount` bytes are kept in the log and read on demand.
    public static func externalStorage(threshold byteCount: Int) -> AttributeOption {
        precondition(byteCount >= 0, "an external storage threshold cannot be negative (\(byteCount))")
        return AttributeOption(kind: .externalStorage(threshold: byteCount))
    }

    /// Validation: a numeric (or date, as seconds since 2001) value must lie in `range`.
    public static func range(_ range: ClosedRange<Double>) -> AttributeOption {
        AttributeOption(kind: .range(minimum: range.lowerBound, maximum: range.upperBound))
    }

    /// Validation: a numeric value must be at least `minimum`.
    public static func minimum(_ minimum: Double) -> AttributeOption {
        AttributeOption(kind: .range(minimum: minimum, maximum: nil))
    }

    /// Validation: a numeric value must be at most `maximum`.
    public static func maximum(_ maximum: Double) -> AttributeOption {
        AttributeOption(kind: .range(minimum: nil, maximum: maximum))
    }

    /// Validation: a string's length in characters (or a binary value's byte count) must lie in `range`.
    public static func length(_ range: ClosedRange<Int>) -> AttributeOption {
        AttributeOption(kind: .length(minimum: range.lowerBound, maximum: range.upperBound))
    }

    /// Validation: a string's length (or a binary value's byte count) must be at least `minimum`.
    public static func length(_ range: PartialRangeFrom<Int>) -> AttributeOption {
        AttributeOption(kind: .length(minimum: range.lowerBound, maximum: nil))
    }

    /// Validation: a string must match the regular expression `pattern` entirely.
    public static func pattern(_ pattern: String) -> AttributeOption {
        AttributeOption(kind: .pattern(pattern))
    }

    /// The attribute's name in the previous model version: migration carries the old attribute's values over
    /// to this one instead of dropping them and adding an empty attribute (Core Data's renaming identifier).
    public static func originalName(_ name: String) -> AttributeOption {
        AttributeOption(kind: .originalName(name))
    }
}
