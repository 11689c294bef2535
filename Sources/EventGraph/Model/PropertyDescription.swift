/// An attribute of an entity, as the model describes it.
public struct AttributeDescription: Hashable, Sendable {
    /// The attribute's name.
    public var name: String
    /// Its index in the entity's property list.
    public var index: Int
    /// The stored type.
    public var type: StoredValueType
    /// Whether the attribute may be null.
    public var isOptional: Bool
    /// Whether the value is kept only in memory and never written to the log.
    public var isTransient: Bool
    /// The value of a new object when none is set; `.null` when the declaration computes a new value for every
    /// object (for example `Date()`), whose objects then record their own values.
    public var defaultValue: StoredValue
    /// Binary and transformable values of at least this many bytes are stored externally (read on demand).
    public var externalStorageThreshold: Int?
    /// The transformer of a transformable attribute.
    public var transformerName: String?
    /// Whether the attribute alone is unique.
    public var isUnique: Bool
    /// Whether the store keeps an index on the attribute.
    public var isIndexed: Bool
    /// Validation: smallest and largest numeric value.
    public var minimumValue: Double?
    public var maximumValue: Double?
    /// Validation: smallest and largest length (characters of a string, bytes of binary data).
    public var minimumLength: Int?
    public var maximumLength: Int?
    /// Validation: a regular expression a string must match entirely.
    public var pattern: String?
    /// The attribute's name in the previous model version, when it was renamed (see ``AttributeOption/originalName(_:)``).
    public var originalName: String?
}

/// A relationship of an entity, as the model describes it.
public struct RelationshipDescription: Hashable, Sendable {
    /// The relationship's name.
    public var name: String
    /// Its index in the entity's property list.
    public var index: Int
    /// The destination entity's name and index in the model.
    public var destinationEntityName: String
    public var destinationEntityIndex: Int
    /// The inverse relationship in the destination entity, if any.
    public var inverseName: String?
    public var inverseIndex: Int?
    public var isToMany: Bool
    public var isOrdered: Bool
    /// Whether a to-one relationship may be empty when saved.
    public var isOptional: Bool
    public var deleteRule: RelationshipDeleteRule
    /// Fewest and most targets of a to-many relationship when saved (0: no bound).
    public var minimumCount: Int
    public var maximumCount: Int
    /// The relationship's name in the previous model version, when it was renamed.
    public var originalName: String?
}

/// A property of an entity: an attribute or a relationship.
public enum PropertyDescription: Hashable, Sendable {
    case attribute(AttributeDescription)
    case relationship(RelationshipDescription)

    /// The property's name.
    public var name: String {
        switch self {
        case .attribute(let attribute): attribute.name
        case .relationship(let relationship): relationship.name
        }
    }

    /// The attribute, when the property is one.
    public var attribute: AttributeDescription? {
        if case .attribute(let attribute) = self { attribute } else { nil }
    }

    /// The relationship, when the property is one.
    public var relationship: RelationshipDescription? {
        if case .relationship(let relationship) = self { relationship } else { nil }
    }

    /// Whether the property is stored in the log (transient attributes are not).
    public var isPersistent: Bool {
        if case .attribute(let attribute) = self { !attribute.isTransient } else { true }
    }
}
