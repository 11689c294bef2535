public import Foundation
package import LogFormat

/// A typed attribute value, as the dynamic key-value API, ``FetchFilter`` and ``AttributeDescription`` show it.
///
/// Typed properties (``Attribute``) convert to and from it through ``PersistentValue``. Dates and UUIDs are
/// Foundation values; URLs and decimals are the exact strings the store keeps, so that a value read and written
/// back is unchanged bit for bit.
public enum StoredValue: Hashable, Sendable, CustomStringConvertible {
    /// No value: an optional attribute that is `nil`.
    case null
    /// A 16-bit integer.
    case int16(Int16)
    /// A 32-bit integer.
    case int32(Int32)
    /// A 64-bit integer (also how `Int` is stored).
    case int64(Int64)
    /// A 64-bit floating-point number.
    case double(Double)
    /// A 32-bit floating-point number.
    case float(Float)
    /// A Boolean.
    case bool(Bool)
    /// A string.
    case string(String)
    /// A point in time; stored as its seconds since the reference date, bit for bit.
    case date(Date)
    /// A UUID.
    case uuid(UUID)
    /// An absolute URL, as its string (`URL(string:)` reads it).
    case url(String)
    /// A decimal number, as its canonical string, so that no precision is lost.
    case decimal(String)
    /// Binary data; externally stored values are read from the store before they appear here.
    case binary([UInt8])
    /// The bytes a value transformer produced for a ``Transformable`` attribute.
    case transformable([UInt8])

    /// The value for people: strings quoted (long ones clipped), dates in ISO 8601, binary values by length.
    public var description: String { attributeValue.displayText }
}

/// The type of an attribute, as the model records it.
public enum StoredValueType: Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// ``StoredValue/int16(_:)``.
    case int16
    /// ``StoredValue/int32(_:)``.
    case int32
    /// ``StoredValue/int64(_:)``.
    case int64
    /// ``StoredValue/double(_:)``.
    case double
    /// ``StoredValue/float(_:)``.
    case float
    /// ``StoredValue/bool(_:)``.
    case bool
    /// ``StoredValue/string(_:)``.
    case string
    /// ``StoredValue/date(_:)``.
    case date
    /// ``StoredValue/uuid(_:)``.
    case uuid
    /// ``StoredValue/url(_:)``.
    case url
    /// ``StoredValue/decimal(_:)``.
    case decimal
    /// ``StoredValue/binary(_:)``.
    case binary
    /// ``StoredValue/transformable(_:)``.
    case transformable

    /// The Swift type's name (`Int64`, `Date`, `Binary`…), as messages and egctl print it.
    public var description: String { attributeType.description }
}

// Conversions at the boundary. Rows, filters and indexes keep the log's `AttributeValue`; a value is converted
// here only where it crosses into or out of the public API.

extension StoredValue {
    /// The public form of a stored value. A blob reference is a programmer error: callers read external values
    /// first (``ManagedObject`` does, through `storedAttributeValue(at:)`).
    package init(_ value: AttributeValue) {
        switch value {
        case .null: self = .null
        case .int16(let v): self = .int16(v)
        case .int32(let v): self = .int32(v)
        case .int64(let v): self = .int64(v)
        case .double(let v): self = .double(v)
        case .float(let v): self = .float(v)
        case .bool(let v): self = .bool(v)
        case .string(let v): self = .string(v)
        case .date(let v): self = .date(Date(timeIntervalSinceReferenceDate: v))
        case .uuid(let v): self = .uuid(UUID(logUUID: v))
        case .url(let v): self = .url(v)
        case .decimal(let v): self = .decimal(v)
        case .binary(let v): self = .binary(v)
        case .transformable(let v): self = .transformable(v)
        case .blob(let reference):
            preconditionFailure("external value \(reference) must be read before it leaves the library")
        }
    }

    /// The value as the log stores it.
    package var attributeValue: AttributeValue {
        switch self {
        case .null: .null
        case .int16(let v): .int16(v)
        case .int32(let v): .int32(v)
        case .int64(let v): .int64(v)
        case .double(let v): .double(v)
        case .float(let v): .float(v)
        case .bool(let v): .bool(v)
        case .string(let v): .string(v)
        case .date(let v): .date(v.timeIntervalSinceReferenceDate)
        case .uuid(let v): .uuid(v.logUUID)
        case .url(let v): .url(v)
        case .decimal(let v): .decimal(v)
        case .binary(let v): .binary(v)
        case .transformable(let v): .transformable(v)
        }
    }
}

extension StoredValueType {
    /// The public form of a schema's attribute type.
    package init(_ type: AttributeType) {
        switch type {
        case .int16: self = .int16
        case .int32: self = .int32
        case .int64: self = .int64
        case .double: self = .double
        case .float: self = .float
        case .bool: self = .bool
        case .string: self = .string
        case .date: self = .date
        case .uuid: self = .uuid
        case .url: self = .url
        case .decimal: self = .decimal
        case .binary: self = .binary
        case .transformable: self = .transformable
        }
    }

    /// The type as the schema records it.
    package var attributeType: AttributeType {
        switch self {
        case .int16: .int16
        case .int32: .int32
        case .int64: .int64
        case .double: .double
        case .float: .float
        case .bool: .bool
        case .string: .string
        case .date: .date
        case .uuid: .uuid
        case .url: .url
        case .decimal: .decimal
        case .binary: .binary
        case .transformable: .transformable
        }
    }
}
