public import Foundation
public import LogFormat

/// A Swift type that can be the value of an ``Attribute``: it maps to one of the log's attribute types.
///
/// EventGraph provides conformances for the integer, floating-point, `Bool`, `String`, `Date`, `UUID`, `URL`,
/// `Decimal`, `Data` and `[UInt8]` types, and for `Optional` of any of them (an optional attribute).
public protocol PersistentValue {
    /// The attribute type recorded in the schema.
    static var attributeType: AttributeType { get }
    /// Whether the type admits "no value" (`nil`), making the attribute optional.
    static var isOptionalType: Bool { get }
    /// Creates a value from its stored form, or returns `nil` when the stored value does not fit the type.
    init?(attributeValue: AttributeValue)
    /// The stored form of the value.
    var attributeValue: AttributeValue { get }
}

extension PersistentValue {
    public static var isOptionalType: Bool { false }
}

extension Int16: PersistentValue {
    public static var attributeType: AttributeType { .int16 }
    public init?(attributeValue: AttributeValue) {
        guard case .int16(let value) = attributeValue else { return nil }
        self = value
    }
    public var attributeValue: AttributeValue { .int16(self) }
}

extension Int32: PersistentValue {
    public static var attributeType: AttributeType { .int32 }
    public init?(attributeValue: AttributeValue) {
        guard case .int32(let value) = attributeValue else { return nil }
        self = value
    }
    public var attributeValue: AttributeValue { .int32(self) }
}

extension Int64: PersistentValue {
    public static var attributeType: AttributeType { .int64 }
    public init?(attributeValue: AttributeValue) {
        guard case .int64(let value) = attributeValue else { return nil }
        self = value
    }
    public var attributeValue: AttributeValue { .int64(self) }
}

/// `Int` is stored as a 64-bit integer.
extension Int: PersistentValue {
    public static var attributeType: AttributeType { .int64 }
    public init?(attributeValue: AttributeValue) {
        guard case .int64(let value) = attributeValue else { return nil }
        self = Int(truncatingIfNeeded: value)
    }
    public var attributeValue: AttributeValue { .int64(Int64(self)) }
}

extension Double: PersistentValue {
    public static var attributeType: AttributeType { .double }
    public init?(attributeValue: AttributeValue) {
        guard case .double(let value) = attributeValue else { return nil }
        self = value
    }
    public var attributeValue: AttributeValue { .double(self) }
}

extension Float: PersistentValue {
    public static var attributeType: AttributeType { .float }
    public init?(attributeValue: AttributeValue) {
        guard case .float(let value) = attributeValue else { return nil }
        self = value
    }
    public var attributeValue: AttributeValue { .float(self) }
}

extension Bool: PersistentValue {
    public static var attributeType: AttributeType { .bool }
    public init?(attributeValue: AttributeValue) {
        guard case .bool(let value) = attributeValue else { return nil }
        self = value
    }
    public var attributeValue: AttributeValue { .bool(self) }
}

extension String: PersistentValue {
    public static var attributeType: AttributeType { .string }
    public init?(attributeValue: AttributeValue) {
        guard case .string(let value) = attributeValue else { return nil }
        self = value
    }
    public var attributeValue: AttributeValue { .string(self) }
}

/// Dates are stored as seconds since 2001-01-01T00:00:00Z, bit for bit.
extension Date: PersistentValue {
    public static var attributeType: AttributeType { .date }
    public init?(attributeValue: AttributeValue) {
        guard case .date(let value) = attributeValue else { return nil }
        self.init(timeIntervalSinceReferenceDate: value)
    }
    public var attributeValue: AttributeValue { .date(timeIntervalSinceReferenceDate) }
}

extension UUID: PersistentValue {
    public static var attributeType: AttributeType { .uuid }
    public init?(attributeValue: AttributeValue) {
        guard case .uuid(let value) = attributeValue else { return nil }
        self.init(logUUID: value)
    }
    public var attributeValue: AttributeValue { .uuid(logUUID) }
}

extension URL: PersistentValue {
    public static var attributeType: AttributeType { .url }
    public init?(attributeValue: AttributeValue) {
        guard case .url(let value) = attributeValue else { return nil }
        self.init(string: value)
    }
    public var attributeValue: AttributeValue { .url(absoluteString) }
}

/// Decimals are stored as their canonical string, so no precision is lost.
extension Decimal: PersistentValue {
    public static var attributeType: AttributeType { .decimal }
    public init?(attributeValue: AttributeValue) {
        guard case .decimal(let value) = attributeValue else { return nil }
        self.init(string: value, locale: Locale(identifier: "en_US_POSIX"))
    }
    public var attributeValue: AttributeValue { .decimal(description) }
}

extension Data: PersistentValue {
    public static var attributeType: AttributeType { .binary }
    public init?(attributeValue: AttributeValue) {
        guard case .binary(let value) = attributeValue else { return nil }
        self.init(value)
    }
    public var attributeValue: AttributeValue { .binary(Array(self)) }
}

extension Array: PersistentValue where Element == UInt8 {
    public static var attributeType: AttributeType { .binary }
    public init?(attributeValue: AttributeValue) {
        guard case .binary(let value) = attributeValue else { return nil }
        self = value
    }
    public var attributeValue: AttributeValue { .binary(self) }
}

/// An optional attribute: `nil` is stored as ``AttributeValue/null``.
extension Optional: PersistentValue where Wrapped: PersistentValue {
    public static var attributeType: AttributeType { Wrapped.attributeType }
    public static var isOptionalType: Bool { true }
    public init?(attributeValue: AttributeValue) {
        if case .null = attributeValue {
            self = .none
            return
        }
        guard let wrapped = Wrapped(attributeValue: attributeValue) else { return nil }
        self = .some(wrapped)
    }
    public var attributeValue: AttributeValue {
        switch self {
        case .none: .null
        case .some(let wrapped): wrapped.attributeValue
        }
    }
}

extension UUID {
    /// Converts a log UUID to a Foundation UUID.
    package init(logUUID: LogUUID) {
        let h = logUUID.high
        let l = logUUID.low
        func byte(_ word: UInt64, _ i: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: word >> (56 - 8 * i)) }
        self.init(uuid: (
            byte(h, 0), byte(h, 1), byte(h, 2), byte(h, 3), byte(h, 4), byte(h, 5), byte(h, 6), byte(h, 7),
            byte(l, 0), byte(l, 1), byte(l, 2), byte(l, 3), byte(l, 4), byte(l, 5), byte(l, 6), byte(l, 7)))
    }

    /// The same UUID as the log stores it.
    package var logUUID: LogUUID {
        let u = uuid
        let high = UInt64(u.0) << 56 | UInt64(u.1) << 48 | UInt64(u.2) << 40 | UInt64(u.3) << 32
            | UInt64(u.4) << 24 | UInt64(u.5) << 16 | UInt64(u.6) << 8 | UInt64(u.7)
        let low = UInt64(u.8) << 56 | UInt64(u.9) << 48 | UInt64(u.10) << 40 | UInt64(u.11) << 32
            | UInt64(u.12) << 24 | UInt64(u.13) << 16 | UInt64(u.14) << 8 | UInt64(u.15)
        return LogUUID(high: high, low: low)
    }
}
