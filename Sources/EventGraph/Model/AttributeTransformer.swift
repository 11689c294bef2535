import Foundation

/// Converts values of a type that is not a ``PersistentValue`` to bytes and back, for a ``Transformable``
/// attribute (Core Data's value transformers).
public protocol AttributeTransformer<Value>: Sendable {
    /// The in-memory type.
    associatedtype Value
    /// A stable name recorded in the schema, so tools know which transformer produced the bytes.
    var name: String { get }
    /// Encodes a value.
    func encode(_ value: Value) throws -> [UInt8]
    /// Decodes bytes that ``encode(_:)`` produced.
    func decode(_ bytes: [UInt8]) throws -> Value
}

/// A transformer for any `Codable` type, stored as JSON with sorted keys (stable bytes for equal values).
public struct CodableTransformer<Value: Codable>: AttributeTransformer {
    /// Creates the transformer.
    public init() {}

    public var name: String { "Codable<\(String(describing: Value.self))>" }

    public func encode(_ value: Value) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array(try encoder.encode(value))
    }

    public func decode(_ bytes: [UInt8]) throws -> Value {
        try JSONDecoder().decode(Value.self, from: Data(bytes))
    }
}
