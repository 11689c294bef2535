/// The model recorded in the log, so a tool can decode every changeset without the application's code.
///
/// A schema frame is written when a store is created and whenever the model changes (migration); changesets
/// are decoded against the most recent schema frame before them.
package struct SchemaPayload: Hashable, Sendable {
    /// The model's name (for example "Blog").
    package var modelName: String
    /// The application's version identifier for the model (for example "2").
    package var versionIdentifier: String
    /// A stable hash of the model's persistent shape (computed by EventGraph).
    package var modelHash: UInt64
    /// Every entity; ``ObjectReference/entityIndex`` indexes this array.
    package var entities: [EntitySchema]

    /// Creates a schema.
    package init(modelName: String, versionIdentifier: String, modelHash: UInt64, entities: [EntitySchema]) {
        self.modelName = modelName
        self.versionIdentifier = versionIdentifier
        self.modelHash = modelHash
        self.entities = entities
    }
}

/// One entity of the schema.
package struct EntitySchema: Hashable, Sendable {
    /// The name, unique within its scope.
    package var name: String
    /// The parent entity's name, for sub-entities.
    package var superentityName: String?
    /// Whether only sub-entities have instances.
    package var isAbstract: Bool
    /// All properties, inherited ones first (in the superentity's order), then the entity's own.
    /// ``PropertyChange/propertyIndex`` indexes this array.
    package var properties: [PropertySchema]
    /// Uniqueness constraints: each is a list of property names whose values together are unique.
    package var uniquenessConstraints: [[String]]
    /// Indexes: each is a list of property names.
    package var indexes: [[String]]
    /// The name in the model version before this one, when it was renamed (metadata a migration reads to infer the
    /// rename; recorded since schema payload version 2).
    package var originalName: String?

    /// Creates a description.
    package init(
        name: String, superentityName: String? = nil, isAbstract: Bool = false, properties: [PropertySchema],
        uniquenessConstraints: [[String]] = [], indexes: [[String]] = [], originalName: String? = nil
    ) {
        self.originalName = originalName
        self.name = name
        self.superentityName = superentityName
        self.isAbstract = isAbstract
        self.properties = properties
        self.uniquenessConstraints = uniquenessConstraints
        self.indexes = indexes
    }
}

/// A property of an entity: an attribute or a relationship.
package enum PropertySchema: Hashable, Sendable {
    case attribute(AttributeSchema)
    case relationship(RelationshipSchema)

    /// The property's name.
    package var name: String {
        switch self {
        case .attribute(let attribute): attribute.name
        case .relationship(let relationship): relationship.name
        }
    }
}

/// An attribute as the schema records it.
package struct AttributeSchema: Hashable, Sendable {
    /// The name, unique within its scope.
    package var name: String
    /// The type of its values.
    package var type: AttributeType
    /// Whether it may be empty (null / no target).
    package var isOptional: Bool
    /// Transient attributes are described but never written in changesets.
    package var isTransient: Bool
    /// The value of an object that does not record one.
    package var defaultValue: AttributeValue?
    /// For binary and transformable attributes: values of at least this many bytes are stored in blob frames
    /// and read lazily. `nil` keeps every value inline.
    package var externalStorageThreshold: UInt64?
    /// For transformable attributes: the name of the value transformer that produced the bytes.
    package var transformerName: String?
    /// The name in the model version before this one, when it was renamed (metadata a migration reads to infer the
    /// rename; recorded since schema payload version 2).
    package var originalName: String?

    /// Creates a description.
    package init(
        name: String, type: AttributeType, isOptional: Bool = true, isTransient: Bool = false,
        defaultValue: AttributeValue? = nil, externalStorageThreshold: UInt64? = nil, transformerName: String? = nil,
        originalName: String? = nil
    ) {
        self.originalName = originalName
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.defaultValue = defaultValue
        self.externalStorageThreshold = externalStorageThreshold
        self.transformerName = transformerName
    }
}

/// What happens to related objects when an object is deleted.
package enum DeleteRule: UInt8, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case nullify = 0
    case cascade = 1
    case deny = 2
    case noAction = 3

    package var description: String {
        switch self {
        case .nullify: "nullify"
        case .cascade: "cascade"
        case .deny: "deny"
        case .noAction: "noAction"
        }
    }
}

/// A relationship as the schema records it.
package struct RelationshipSchema: Hashable, Sendable {
    /// The name, unique within its scope.
    package var name: String
    /// The entity its targets belong to.
    package var destinationEntityName: String
    /// The relationship of the destination that points back, if any.
    package var inverseName: String?
    /// Whether it holds several targets.
    package var isToMany: Bool
    /// Whether a to-many keeps the order of its targets.
    package var isOrdered: Bool
    /// Whether it may be empty (null / no target).
    package var isOptional: Bool
    /// What deleting the source does to the targets.
    package var deleteRule: DeleteRule
    /// Minimum number of targets (to-many), 0 for none.
    package var minCount: UInt32
    /// Maximum number of targets (to-many), 0 for unbounded.
    package var maxCount: UInt32
    /// The name in the model version before this one, when it was renamed (metadata a migration reads to infer the
    /// rename; recorded since schema payload version 2).
    package var originalName: String?

    /// Creates a description.
    package init(
        name: String, destinationEntityName: String, inverseName: String?, isToMany: Bool, isOrdered: Bool = false,
        isOptional: Bool = true, deleteRule: DeleteRule = .nullify, minCount: UInt32 = 0, maxCount: UInt32 = 0,
        originalName: String? = nil
    ) {
        self.originalName = originalName
        self.name = name
        self.destinationEntityName = destinationEntityName
        self.inverseName = inverseName
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.isOptional = isOptional
        self.deleteRule = deleteRule
        self.minCount = minCount
        self.maxCount = maxCount
    }
}
