package import LogFormat

extension MigrationMapping {
    /// Infers the mapping from the model recorded in the store at `path` to `model`; see
    /// ``StoreMigration/dryRun(path:to:options:)`` for what the replay would find as well.
    ///
    /// - Throws: ``EventGraphError/Code/modelMismatch`` naming the entity and property of the first change that
    ///   cannot be inferred, and what a migration plan must provide for it; `log` when the file cannot be read.
    public static func inferred(fromStoreAt path: String, to model: ObjectModel) throws(EventGraphError)
        -> MigrationMapping
    {
        let recorded = try EventGraphError.converting(path: path) { try StoreMigration.recordedSchema(path: path) }
        guard let recorded else { throw EventGraphError(.invalidArgument, "\(path) records no model") }
        return try inferred(from: recorded, to: model)
    }

    /// Infers the mapping from a store's recorded model to `model` (Core Data's lightweight migration), or refuses.
    ///
    /// Inferred: an entity, attribute or relationship added (an attribute optional or with a default) or removed;
    /// one renamed through its declared original name (``ManagedObject/originalEntityName``,
    /// ``AttributeOption/originalName(_:)``, `@Relationship(originalName:)`); optional → required when the attribute
    /// has a default; a number widened (Int16 → Int32 → Int64, Float → Double); to-one → to-many; ordering of a
    /// to-many; indexes; a uniqueness constraint (existing duplicates are found when the log is replayed); an entity
    /// moved in or out of a parent entity (properties are matched by name).
    ///
    /// - Throws: ``EventGraphError/Code/modelMismatch`` naming the entity and property of the first change that
    ///   cannot be inferred, and what a migration plan must provide for it.
    ///
    /// - Parameter computed: per old entity name, the properties of the new entity a custom stage's code sets
    ///   (inference neither maps nor refuses them); a name `Entity.property` names a property of any new entity.
    package static func inferred(
        from recorded: SchemaPayload, to model: ObjectModel, computed: [String: Set<String>] = [:]
    ) throws(EventGraphError) -> MigrationMapping {
        var inference = MigrationInference(source: recorded, model: model, computed: computed)
        return try inference.run()
    }
}

/// The state of one inference: which old entity each new one comes from, then property by property.
struct MigrationInference {
    let source: SchemaPayload
    let model: ObjectModel
    let target: SchemaPayload
    /// Per old entity name, the new properties a custom stage computes.
    let computed: [String: Set<String>]
    var changes: [MigrationChange] = []
    /// For each new entity, the index of the old entity it continues (`nil`: added).
    var origins: [Int?] = []
    /// The inverses (`Entity.property`) of the relationships a custom stage sets: the code writes both sides, so
    /// inference maps neither.
    var computedInverses: Set<String> = []

    init(source: SchemaPayload, model: ObjectModel, computed: [String: Set<String>]) {
        self.source = source
        self.model = model
        self.computed = computed
        self.target = model.schema
    }

    mutating func run() throws(EventGraphError) -> MigrationMapping {
        try matchEntities()
        computedInverses = inversesOfComputedRelationships()
        var entityTargets = [UInt32?](repeating: nil, count: source.entities.count)
        for (newIndex, origin) in origins.enumerated() {
            if let origin { entityTargets[origin] = UInt32(newIndex) }
        }
        var propertyTargets = source.entities.map {
            [MigrationMapping.PropertyTarget?](repeating: nil, count: $0.properties.count)
        }
        for (newIndex, origin) in origins.enumerated() {
            guard let origin else { continue }
            propertyTargets[origin] = try mapProperties(of: origin, to: newIndex, entityTargets: entityTargets)
        }
        for (oldIndex, oldEntity) in source.entities.enumerated() where entityTargets[oldIndex] == nil {
            changes.append(
                MigrationChange(
                    kind: .entityRemoved, entityName: oldEntity.name, propertyName: nil,
                    detail: "removed, with its objects"))
        }
        let defaults = target.entities.map { $0.properties.map(SchemaCatalog.defaultValue(of:)) }
        return MigrationMapping(
            sourceSchema: source, targetSchema: target, changes: changes, entityTargets: entityTargets,
            propertyTargets: propertyTargets, targetDefaults: defaults)
    }

    /// Pairs every new entity with the old one of its original name (or its own name), or none.
    mutating func matchEntities() throws(EventGraphError) {
        let oldIndexByName = Dictionary(
            source.entities.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        var claimedBy: [Int: String] = [:]
        for entity in model.entities {
            let origin = entity.originalName.flatMap { oldIndexByName[$0] } ?? oldIndexByName[entity.name]
            if let origin {
                if let other = claimedBy.updateValue(entity.name, forKey: origin) {
                    throw EventGraphError(
                        .modelMismatch,
                        "\(other) and \(entity.name) both continue the entity \(source.entities[origin].name): a split "
                            + "of an entity cannot be inferred; a migration plan must provide a custom stage that "
                            + "creates the \(entity.name) objects")
                }
                let old = source.entities[origin]
                if old.name != entity.name {
                    changes.append(
                        MigrationChange(
                            kind: .entityRenamed, entityName: entity.name, propertyName: nil,
                            detail: "renamed from \(old.name)"))
                }
                if old.superentityName.map(newName(ofOldEntity:)) != entity.superentityName {
                    changes.append(
                        MigrationChange(
                            kind: .entityParentChanged, entityName: entity.name, propertyName: nil,
                            detail:
                                "parent entity \(old.superentityName ?? "none") → \(entity.superentityName ?? "none")"))
                }
                if entity.isAbstract && !old.isAbstract {
                    throw EventGraphError(
                        .modelMismatch,
                        "\(entity.name) becomes abstract, so its existing objects would have no entity: a migration plan "
                            + "must provide a custom stage that moves them into a sub-entity")
                }
            } else {
                changes.append(
                    MigrationChange(kind: .entityAdded, entityName: entity.name, propertyName: nil, detail: "added"))
            }
            origins.append(origin)
        }
    }

    /// `Entity.property` for the inverse of every relationship named in ``computed`` (by its new entity's name, or
    /// qualified).
    func inversesOfComputedRelationships() -> Set<String> {
        var inverses: Set<String> = []
        for (oldName, names) in computed {
            for name in names {
                let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
                let (entityName, propertyName) =
                    parts.count == 2 ? (parts[0], parts[1]) : (newName(ofOldEntity: oldName), name)
                guard let entity = target.entities.first(where: { $0.name == entityName }),
                    let property = entity.properties.first(where: { $0.name == propertyName }),
                    case .relationship(let relationship) = property, let inverse = relationship.inverseName
                else { continue }
                inverses.insert("\(relationship.destinationEntityName).\(inverse)")
            }
        }
        return inverses
    }

    /// The new name of an old entity, or its old name when it was removed.
    func newName(ofOldEntity name: String) -> String {
        for (newIndex, origin) in origins.enumerated() where origin.map({ source.entities[$0].name }) == name {
            return model.entities[newIndex].name
        }
        if let entity = model.entities.first(where: { $0.name == name }) { return entity.name }
        return name
    }

    mutating func note(
        _ kind: MigrationChange.Kind, _ entity: EntityDescription, _ property: String, _ detail: String
    ) {
        changes.append(MigrationChange(kind: kind, entityName: entity.name, propertyName: property, detail: detail))
    }
}
