/// The model recorded in the log, so a tool can decode every changeset without the application's code.
///
/// A schema frame is written when a store is created and whenever the model changes (migration); changesets
/// are decoded against the most recent schema frame before them.
public struct SchemaPayload: Hashable, Sendable {
    /// The model's name (for example "Blog").
    public var modelName: String
    /// The application's version identifier for the model (for example "2").
    public var versionIdentifier: String
    /// A stable hash of the model's persistent shape (computed by EventGraph).
    public var modelHash: UInt64
    /// Every entity; ``ObjectReference/entityIndex`` indexes this array.
    public var entities: [EntitySchema]

    /// Creates a schema.
    public init(modelName: String, versionIdentifier: String, modelHash: UInt64, entities: [EntitySchema]) {
        self.modelName = modelName
        self.versionIdentifier = versionIdentifier
        self.modelHash = modelHash
        self.entities = entities
    }
}

/// One entity of the schema.
public struct EntitySchema: Hashable, Sendable {
    /// The name, unique within its scope.
    public var name: String
    /// The parent entity's name, for sub-entities.
    public var superentityName: String?
    /// Whether only sub-entities have instances.
    public var isAbstract: Bool
    /// All properties, inherited ones first (in the superentity's order), then the entity's own.
    /// ``PropertyChange/propertyIndex`` indexes this array.
    public var properties: [PropertySchema]
    /// Uniqueness constraints: each is a list of property names whose values together are unique.
    public var uniquenessConstraints: [[String]]
    /// Indexes: each is a list of property names.
    public var indexes: [[String]]
    /// The name in the model version before this one, when it was renamed (metadata a migration reads to infer the
    /// rename; recorded since schema payload version 2).
    public var originalName: String?

    /// Creates a description.
    public init(
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
public enum PropertySchema: Hashable, Sendable {
    case attribute(AttributeSchema)
    case relationship(RelationshipSchema)

    /// The property's name.
    public var name: String {
        switch self {
        case .attribute(let attribute): attribute.name
        case .relationship(let relationship): relationship.name
        }
    }
}

/// An attribute as the schema records it.
public struct AttributeSchema: Hashable, Sendable {
    /// The name, unique within its scope.
    public var name: String
    /// The type of its values.
    public var type: AttributeType
    /// Whether it may be empty (null / no target).
    public var isOptional: Bool
    /// Transient attributes are described but never written in changesets.
    public var isTransient: Bool
    /// The value of an object that does not record one.
    public var defaultValue: AttributeValue?
    /// For binary and transformable attributes: values of at least this many bytes are stored in blob frames
    /// and read lazily. `nil` keeps every value inline.
    public var externalStorageThreshold: UInt64?
    /// For transformable attributes: the name of the value transformer that produced the bytes.
    public var transformerName: String?
    /// The name in the model version before this one, when it was renamed (metadata a migration reads to infer the
    /// rename; recorded since schema payload version 2).
    public var originalName: String?

    /// Creates a description.
    public init(
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
public enum DeleteRule: UInt8, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case nullify = 0
    case cascade = 1
    case deny = 2
    case noAction = 3

    public var description: String {
        switch self {
        case .nullify: "nullify"
        case .cascade: "cascade"
        case .deny: "deny"
        case .noAction: "noAction"
        }
    }
}

/// A relationship as the schema records it.
public struct RelationshipSchema: Hashable, Sendable {
    /// The name, unique within its scope.
    public var name: String
    /// The entity its targets belong to.
    public var destinationEntityName: String
    /// The relationship of the destination that points back, if any.
    public var inverseName: String?
    /// Whether it holds several targets.
    public var isToMany: Bool
    /// Whether a to-many keeps the order of its targets.
    public var isOrdered: Bool
    /// Whether it may be empty (null / no target).
    public var isOptional: Bool
    /// What deleting the source does to the targets.
    public var deleteRule: DeleteRule
    /// Minimum number of targets (to-many), 0 for none.
    public var minCount: UInt32
    /// Maximum number of targets (to-many), 0 for unbounded.
    public var maxCount: UInt32
    /// The name in the model version before this one, when it was renamed (metadata a migration reads to infer the
    /// rename; recorded since schema payload version 2).
    public var originalName: String?

    /// Creates a description.
    public init(
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
