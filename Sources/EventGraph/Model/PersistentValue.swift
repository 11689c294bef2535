public import Foundation
package import LogFormat

/// A Swift type that can be the value of an ``Attribute``: it maps to one of the ``StoredValueType``s.
///
/// EventGraph provides conformances for the integer, floating-point, `Bool`, `String`, `Date`, `UUID`, `URL`,
/// `Decimal`, `Data` and `[UInt8]` types, and for `Optional` of any of them (an optional attribute).
///
/// A conformance is not isolated to an actor (`SendableMetatype`): a predicate's constants of the type are read
/// through it on whichever thread translates or runs the fetch.
public protocol PersistentValue: SendableMetatype {
    /// The attribute type recorded in the model.
    static var storedValueType: StoredValueType { get }
    /// Whether the type admits "no value" (`nil`), making the attribute optional.
    static var isOptionalType: Bool { get }
    /// Creates a value from its stored form, or returns `nil` when the stored value does not fit the type.
    init?(storedValue: StoredValue)
    /// The stored form of the value.
    var storedValue: StoredValue { get }
}

extension PersistentValue {
    /// `false`: only `Optional` admits `nil`.
    public static var isOptionalType: Bool { false }
}

// The library's own conformances are inlinable: ``Attribute``'s accessors are specialized for each value type in
// the app's module, so reading an `Int64` attribute is one switch on the converted value, not a witness call.

extension Int16: PersistentValue {
    /// ``StoredValueType/int16``.
    public static var storedValueType: StoredValueType { .int16 }
    /// The integer of an ``StoredValue/int16(_:)`` value.
    @inlinable public init?(storedValue: StoredValue) {
        guard case .int16(let value) = storedValue else { return nil }
        self = value
    }
    /// ``StoredValue/int16(_:)``.
    @inlinable public var storedValue: StoredValue { .int16(self) }
}

extension Int32: PersistentValue {
    /// ``StoredValueType/int32``.
    public static var storedValueType: StoredValueType { .int32 }
    /// The integer of an ``StoredValue/int32(_:)`` value.
    @inlinable public init?(storedValue: StoredValue) {
        guard case .int32(let value) = storedValue else { return nil }
        self = value
    }
    /// ``StoredValue/int32(_:)``.
    @inlinable public var storedValue: StoredValue { .int32(self) }
}

extension Int64: PersistentValue {
    /// ``StoredValueType/int64``.
    public static var storedValueType: StoredValueType { .int64 }
    /// The integer of an ``StoredValue/int64(_:)`` value.
    @inlinable public init?(storedValue: StoredValue) {
        guard case .int64(let value) = storedValue else { return nil }
        self = value
    }
    /// ``StoredValue/int64(_:)``.
    @inlinable public var storedValue: StoredValue { .int64(self) }
}

/// `Int` is stored as a 64-bit integer.
extension Int: PersistentValue {
    /// ``StoredValueType/int64``.
    public static var storedValueType: StoredValueType { .int64 }
    /// The integer of an ``StoredValue/int64(_:)`` value.
    @inlinable public init?(storedValue: StoredValue) {
        guard case .int64(let value) = storedValue else { return nil }
        self = Int(truncatingIfNeeded: value)
    }
    /// ``StoredValue/int64(_:)``.
    @inlinable public var storedValue: StoredValue { .int64(Int64(self)) }
}

extension Double: PersistentValue {
    /// ``StoredValueType/double``.
    public static var storedValueType: StoredValueType { .double }
    /// The number of a ``StoredValue/double(_:)`` value.
    @inlinable public init?(storedValue: StoredValue) {
        guard case .double(let value) = storedValue else { return nil }
        self = value
    }
    /// ``StoredValue/double(_:)``.
    @inlinable public var storedValue: StoredValue { .double(self) }
}

extension Float: PersistentValue {
    /// ``StoredValueType/float``.
    public static var storedValueType: StoredValueType { .float }
    /// The number of a ``StoredValue/float(_:)`` value.
    @inlinable public init?(storedValue: StoredValue) {
        guard case .float(let value) = storedValue else { return nil }
        self = value
    }
    /// ``StoredValue/float(_:)``.
    @inlinable public var storedValue: StoredValue { .float(self) }
}

extension Bool: PersistentValue {
    /// ``StoredValueType/bool``.
    public static var storedValueType: StoredValueType { .bool }
    /// The Boolean of a ``StoredValue/bool(_:)`` value.
    @inlinable public init?(storedValue: StoredValue) {
        guard case .bool(let value) = storedValue else { return nil }
        self = value
    }
    /// ``StoredValue/bool(_:)``.
    @inlinable public var storedValue: StoredValue { .bool(self) }
}

extension String: PersistentValue {
    /// ``StoredValueType/string``.
    public static var storedValueType: StoredValueType { .string }
    /// The string of a ``StoredValue/string(_:)`` value.
    @inlinable public init?(storedValue: StoredValue) {
        guard case .string(let value) = storedValue else { return nil }
        self = value
    }
    /// ``StoredValue/string(_:)``.
    @inlinable public var storedValue: StoredValue { .string(self) }
}

/// Dates are stored as seconds since 2001-01-01T00:00:00Z, bit for bit.
extension Date: PersistentValue {
    /// ``StoredValueType/date``.
    public static var storedValueType: StoredValueType { .date }
    /// The date of a ``StoredValue/date(_:)`` value.
    @inlinable public init?(storedValue: StoredValue) {
        guard case .date(let value) = storedValue else { return nil }
        self = value
    }
    /// ``StoredValue/date(_:)``.
    @inlinable public var storedValue: StoredValue { .date(self) }
}

extension UUID: PersistentValue {
    /// ``StoredValueType/uuid``.
    public static var storedValueType: StoredValueType { .uuid }
    /// The UUID of a ``StoredValue/uuid(_:)`` value.
    @inlinable public init?(storedValue: StoredValue) {
        guard case .uuid(let value) = storedValue else { return nil }
        self = value
    }
    /// ``StoredValue/uuid(_:)``.
    @inlinable public var storedValue: StoredValue { .uuid(self) }
}

extension URL: PersistentValue {
    /// ``StoredValueType/url``.
    public static var storedValueType: StoredValueType { .url }
    /// The URL a ``StoredValue/url(_:)`` value's string parses to.
    public init?(storedValue: StoredValue) {
        guard case .url(let value) = storedValue else { return nil }
        self.init(string: value)
    }
    /// ``StoredValue/url(_:)`` with the absolute string.
    public var storedValue: StoredValue { .url(absoluteString) }
}

/// Decimals are stored as their canonical string, so no precision is lost.
extension Decimal: PersistentValue {
    /// ``StoredValueType/decimal``.
    public static var storedValueType: StoredValueType { .decimal }
    /// The decimal a ``StoredValue/decimal(_:)`` value's string parses to.
    public init?(storedValue: StoredValue) {
        guard case .decimal(let value) = storedValue else { return nil }
        self.init(string: value, locale: Locale(identifier: "en_US_POSIX"))
    }
    /// ``StoredValue/decimal(_:)`` with the canonical string.
    public var storedValue: StoredValue { .decimal(description) }
}

extension Data: PersistentValue {
    /// ``StoredValueType/binary``.
    public static var storedValueType: StoredValueType { .binary }
    /// The bytes of a ``StoredValue/binary(_:)`` value.
    public init?(storedValue: StoredValue) {
        guard case .binary(let value) = storedValue else { return nil }
        self.init(value)
    }
    /// ``StoredValue/binary(_:)``.
    public var storedValue: StoredValue { .binary(Array(self)) }
}

extension Array: PersistentValue where Element == UInt8 {
    /// ``StoredValueType/binary``.
    public static var storedValueType: StoredValueType { .binary }
    /// The bytes of a ``StoredValue/binary(_:)`` value.
    @inlinable public init?(storedValue: StoredValue) {
        guard case .binary(let value) = storedValue else { return nil }
        self = value
    }
    /// ``StoredValue/binary(_:)``.
    @inlinable public var storedValue: StoredValue { .binary(self) }
}

/// An optional attribute: `nil` is stored as ``StoredValue/null``.
extension Optional: PersistentValue where Wrapped: PersistentValue {
    /// The wrapped type's.
    public static var storedValueType: StoredValueType { Wrapped.storedValueType }
    /// `true`.
    public static var isOptionalType: Bool { true }
    /// `nil` for ``StoredValue/null``, else the wrapped type's value.
    @inlinable public init?(storedValue: StoredValue) {
        if case .null = storedValue {
            self = .none
            return
        }
        guard let wrapped = Wrapped(storedValue: storedValue) else { return nil }
        self = .some(wrapped)
    }
    /// ``StoredValue/null`` for `nil`, else the wrapped value's.
    @inlinable public var storedValue: StoredValue {
        switch self {
        case .none: .null
        case .some(let wrapped): wrapped.storedValue
        }
    }
}

// The log's forms, for the library's model building and predicate translation (not per property access).
extension PersistentValue {
    /// The attribute type as the schema records it.
    static var attributeType: AttributeType { storedValueType.attributeType }
    /// The value as the log stores it.
    var attributeValue: AttributeValue { storedValue.attributeValue }
}

extension UUID {
    /// Converts a log UUID to a Foundation UUID.
    package init(logUUID: LogUUID) {
        let h = logUUID.high
        let l = logUUID.low
        func byte(_ word: UInt64, _ i: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: word >> (56 - 8 * i)) }
        self.init(
            uuid: (
                byte(h, 0), byte(h, 1), byte(h, 2), byte(h, 3), byte(h, 4), byte(h, 5), byte(h, 6), byte(h, 7),
                byte(l, 0), byte(l, 1), byte(l, 2), byte(l, 3), byte(l, 4), byte(l, 5), byte(l, 6), byte(l, 7)
            ))
    }

    /// The same UUID as the log stores it.
    package var logUUID: LogUUID {
        let u = uuid
        let high =
            UInt64(u.0) << 56 | UInt64(u.1) << 48 | UInt64(u.2) << 40 | UInt64(u.3) << 32
            | UInt64(u.4) << 24 | UInt64(u.5) << 16 | UInt64(u.6) << 8 | UInt64(u.7)
        let low =
            UInt64(u.8) << 56 | UInt64(u.9) << 48 | UInt64(u.10) << 40 | UInt64(u.11) << 32
            | UInt64(u.12) << 24 | UInt64(u.13) << 16 | UInt64(u.14) << 8 | UInt64(u.15)
        return LogUUID(high: high, low: low)
    }
}
