/// The value of any property in the dynamic key-value API: an attribute value, or relationship targets by ID.
public enum ObjectValue: Hashable, Sendable, CustomStringConvertible {
    /// An attribute's value (binary values read from external storage appear as ``StoredValue/binary(_:)``).
    case attribute(StoredValue)
    /// A to-one relationship's target.
    case toOne(ObjectID?)
    /// A to-many relationship's targets, in order.
    case toMany([ObjectID])

    /// The attribute value, when this is one.
    public var storedValue: StoredValue? {
        if case .attribute(let value) = self { value } else { nil }
    }

    /// The attribute value, or the targets' URIs.
    public var description: String {
        switch self {
        case .attribute(let value): "\(value)"
        case .toOne(let id): id.map(\.uriString) ?? "nil"
        case .toMany(let ids): "[" + ids.map(\.uriString).joined(separator: ", ") + "]"
        }
    }
}
