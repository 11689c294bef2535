import LogFormat

/// An entity of a model: its properties, its place in the inheritance tree, its constraints and indexes.
public final class EntityDescription: @unchecked Sendable, CustomStringConvertible {
    // @unchecked: every stored property is immutable after the model is built; `objectClass` is a metatype.

    /// The entity's name (the class name for typed models).
    public let name: String
    /// The entity's index in ``ObjectModel/entities`` (also its index in the log's schema).
    public let index: Int
    /// The parent entity, for sub-entities.
    public let superentityName: String?
    public let superentityIndex: Int?
    /// Abstract entities have no instances of their own; fetching them returns their sub-entities' objects.
    public let isAbstract: Bool
    /// The entity's name in the previous model version, when it was renamed (``ManagedObject/originalEntityName``,
    /// or as a store's schema records it); a migration matches the old entity by it.
    public let originalName: String?
    /// Every property, inherited ones first.
    public let properties: [PropertyDescription]
    /// Uniqueness constraints declared on this entity (each a list of attribute names); they cover sub-entities.
    public let uniquenessConstraints: [[String]]
    /// Indexes declared on this entity (each a list of attribute names).
    public let indexes: [[String]]
    /// The direct sub-entities' indices.
    public internal(set) var subentityIndices: [Int]
    /// This entity and all its descendants (indices), this entity first.
    public internal(set) var familyIndices: [Int]
    /// The fetched properties, inherited ones first (not stored, so not in ``properties``; see ``FetchedProperty``).
    public internal(set) var fetchedProperties: [FetchedPropertyDescription] = []

    /// The class instantiated for objects of the entity (``ManagedObject`` itself for models read from a log).
    public let objectClass: ManagedObject.Type
    let hasInstanceDefaults: Bool
    let propertyIndexByName: [String: Int]
    /// The committed values of a new object: each property's default.
    let defaultValues: [PropertyValue]
    /// Uniqueness constraints as attribute indices, including those inherited from superentities, each with the
    /// index of the entity that declares it.
    var uniqueConstraints: [UniqueConstraint] = []
    /// The attributes the store keeps a sorted index of (see ``AttributeIndex``), in property order.
    var indexedPropertyIndices: [Int] = []
    let isPersistentProperty: [Bool]
    /// Whether some property is transient (``isPersistentProperty`` has a `false`).
    let hasTransientProperties: Bool
    /// The properties that have a validation rule to check at save, with what the check reads of each.
    let validationRules: [ValidationRule]
    /// The attributes whose large values are stored externally.
    let externalStoragePropertyIndices: [Int]
    /// Each property's relationship as a setter and a save's inverse check read it (`nil` for an attribute): read
    /// per object and value, which must not copy a ``PropertyDescription`` (its names) each time.
    let relationshipLinks: [RelationshipLink?]

    init(
        name: String, index: Int, superentityName: String?, superentityIndex: Int?, isAbstract: Bool,
        properties: [PropertyDescription], uniquenessConstraints: [[String]], indexes: [[String]],
        objectClass: ManagedObject.Type, hasInstanceDefaults: Bool, originalName: String? = nil
    ) {
        self.name = name
        self.originalName = originalName
        self.index = index
        self.superentityName = superentityName
        self.superentityIndex = superentityIndex
        self.isAbstract = isAbstract
        self.properties = properties
        self.uniquenessConstraints = uniquenessConstraints
        self.indexes = indexes
        self.subentityIndices = []
        self.familyIndices = [index]
        self.objectClass = objectClass
        self.hasInstanceDefaults = hasInstanceDefaults
        var byName: [String: Int] = [:]
        for (offset, property) in properties.enumerated() { byName[property.name] = offset }
        self.propertyIndexByName = byName
        self.defaultValues = properties.map { property in
            switch property {
            case .attribute(let attribute):
                .attribute(attribute.isTransient ? .null : attribute.defaultValue.attributeValue)
            case .relationship(let relationship): relationship.isToMany ? .toMany([]) : .toOne(nil)
            }
        }
        self.isPersistentProperty = properties.map(\.isPersistent)
        self.hasTransientProperties = isPersistentProperty.contains(false)
        self.validationRules = properties.compactMap(ValidationRule.init)
        self.externalStoragePropertyIndices = properties.indices.filter {
            properties[$0].attribute?.externalStorageThreshold != nil
        }
        self.relationshipLinks = properties.map { $0.relationship.map(RelationshipLink.init) }
    }

    /// The property with this name.
    public func property(named name: String) -> PropertyDescription? {
        propertyIndexByName[name].map { properties[$0] }
    }

    /// The attribute with this name.
    public func attribute(named name: String) -> AttributeDescription? {
        property(named: name)?.attribute
    }

    /// The relationship with this name.
    public func relationship(named name: String) -> RelationshipDescription? {
        property(named: name)?.relationship
    }

    /// The fetched property with this name.
    public func fetchedProperty(named name: String) -> FetchedPropertyDescription? {
        fetchedProperties.first { $0.name == name }
    }

    /// Whether `other` is this entity or one of its descendants.
    public func isKindOf(_ other: EntityDescription) -> Bool {
        other.familyIndices.contains(index)
    }

    public var description: String { "entity \(name)" }
}

/// The fields of a relationship that setting it reads: its destination, its inverse and its cardinality.
struct RelationshipLink: Sendable {
    let destinationEntityIndex: Int
    /// The inverse relationship's index in the destination entity, `nil` when it has none.
    let inverseIndex: Int?
    let isToMany: Bool

    init(_ relationship: RelationshipDescription) {
        destinationEntityIndex = relationship.destinationEntityIndex
        inverseIndex = relationship.inverseIndex
        isToMany = relationship.isToMany
    }
}

/// A uniqueness constraint resolved to property indices.
struct UniqueConstraint: Hashable, Sendable {
    /// The entity that declares the constraint (rows of its whole family are checked together).
    var entityIndex: Int
    /// The position of the constraint in that entity's ``EntityDescription/uniquenessConstraints``.
    var ordinal: Int
    var propertyIndices: [Int]
    var propertyNames: [String]
}
