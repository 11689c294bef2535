package import LogFormat

/// A model: the entities of a store, with a version identifier and a stable hash.
///
/// Build one from your ``ManagedObject`` subclasses, or from the schema recorded in a log (tools, which have no
/// application classes, then use the dynamic key-value API):
/// ```swift
/// let model = try ObjectModel(name: "Blog", version: "1", types: [Author.self, Post.self, Tag.self])
/// ```
public final class ObjectModel: Sendable, CustomStringConvertible {
    /// The model's name.
    public let name: String
    /// The application's version identifier (for example "2").
    public let versionIdentifier: String
    /// Every entity; an entity's position is its ``EntityDescription/index``.
    public let entities: [EntityDescription]
    /// A stable hash of the model's persistent shape: what the bytes of its logs depend on (see `ModelShape`).
    ///
    /// Equal for equal shapes on every platform, in every process and for every order of the classes; default
    /// values, indexes, delete rules, transformer names, transient attributes, the name and the version
    /// identifier do not contribute. A store opens with any model of the same shape.
    public let hash: UInt64
    /// The model as the log records it (for egctl and the tests; apps use ``entities``).
    package let schema: SchemaPayload
    /// The configuration of each entity, by entity index (see ``configurationName(of:)``).
    let entityConfigurationNames: [String]
    private let entityIndexByName: [String: Int]
    private let entityIndexByClass: [ObjectIdentifier: Int]

    /// Builds a model from managed object classes.
    ///
    /// Superclasses that are themselves ``ManagedObject`` subclasses become superentities (added automatically
    /// when not listed). Every relationship's destination class must be part of the model.
    ///
    /// - Parameters:
    ///   - name: the model's name, recorded in the log.
    ///   - version: the version identifier, recorded in the log.
    ///   - types: the classes.
    ///   - abstractTypes: classes whose entities are abstract (no instances of their own).
    ///   - configurations: the entities of each named configuration, whose objects a container with several
    ///     stores keeps in that configuration's store (see ``ModelContainer/init(model:stores:configuration:)``);
    ///     an entity not listed is in its super-entity's configuration, or in ``defaultConfigurationName``.
    /// - Throws: ``EventGraphError/Code/invalidModel`` naming the inconsistent declaration (an entity listed in two
    ///   configurations, say).
    public convenience init(
        name: String = "Model", version: String = "1", types: [ManagedObject.Type],
        abstractTypes: [ManagedObject.Type] = [], configurations: [String: [ManagedObject.Type]] = [:]
    ) throws(EventGraphError) {
        var ordered: [ManagedObject.Type] = []
        var seen: Set<ObjectIdentifier> = []
        func add(_ type: ManagedObject.Type) {
            guard !seen.contains(ObjectIdentifier(type)) else { return }
            if let superclass = ClassRegistry.managedSuperclass(of: type) { add(superclass) }
            seen.insert(ObjectIdentifier(type))
            ordered.append(type)
        }
        types.forEach(add)
        let abstract = Set(abstractTypes.map(ObjectIdentifier.init))
        var drafts: [EntityDraft] = []
        for type in ordered {
            drafts.append(try EntityDraft(type: type, isAbstract: abstract.contains(ObjectIdentifier(type))))
        }
        let configurationMembers = configurations.mapValues { types in types.map(\.entityName) }
        try self.init(name: name, version: version, drafts: drafts, configurations: configurationMembers)
    }

    /// Builds a model from a schema recorded in a log; objects are plain ``ManagedObject``s.
    ///
    /// - Throws: ``EventGraphError/Code/invalidModel`` when the schema is inconsistent.
    package convenience init(schema: SchemaPayload) throws(EventGraphError) {
        // A default is a plain value: a blob reference names bytes of one transaction, which no new object has.
        for entity in schema.entities {
            for case .attribute(let attribute) in entity.properties {
                guard case .blob = attribute.defaultValue else { continue }
                throw EventGraphError(
                    .invalidModel,
                    "the schema gives \(entity.name).\(attribute.name) an external value reference as its default")
            }
        }
        try self.init(
            name: schema.modelName, version: schema.versionIdentifier,
            drafts: schema.entities.map(EntityDraft.init(schema:)))
    }

    init(name: String, version: String, drafts: [EntityDraft], configurations: [String: [String]] = [:])
        throws(EventGraphError)
    {
        self.name = name
        self.versionIdentifier = version
        var indexByName: [String: Int] = [:]
        for (index, draft) in drafts.enumerated() {
            guard indexByName.updateValue(index, forKey: draft.name) == nil else {
                throw EventGraphError(.invalidModel, "the model declares the entity '\(draft.name)' twice")
            }
        }
        var resolver = ModelResolver(drafts: drafts, indexByName: indexByName)
        let entities = try resolver.resolve()
        try Self.resolveFetchedProperties(of: drafts, into: entities, indexByName: indexByName)
        self.entities = entities
        self.entityIndexByName = indexByName
        self.entityConfigurationNames = try Self.configurationNames(
            of: entities, members: configurations, indexByName: indexByName)
        var byClass: [ObjectIdentifier: Int] = [:]
        for entity in entities where entity.objectClass != ManagedObject.self {
            byClass[ObjectIdentifier(entity.objectClass)] = entity.index
        }
        self.entityIndexByClass = byClass
        let entitySchemas = entities.map { $0.entitySchema }
        let hash = ModelShape.hash(of: entitySchemas)
        self.hash = hash
        self.schema = SchemaPayload(
            modelName: name, versionIdentifier: version, modelHash: hash, entities: entitySchemas)
    }

    /// The entity with this name.
    public func entity(named name: String) -> EntityDescription? {
        entityIndexByName[name].map { entities[$0] }
    }

    /// The entity of a class.
    public func entity(for type: ManagedObject.Type) -> EntityDescription? {
        entityIndexByClass[ObjectIdentifier(type)].map { entities[$0] }
    }

    /// The entity of a class; a programmer error when the class is not part of the model.
    func requireEntity(for type: ManagedObject.Type) -> EntityDescription {
        guard let entity = entity(for: type) else {
            preconditionFailure("\(type) is not part of the model '\(name)'")
        }
        return entity
    }

    public var description: String {
        "model \(name) version \(versionIdentifier) (\(entities.count) entities, hash \(String(hash, radix: 16)))"
    }
}
