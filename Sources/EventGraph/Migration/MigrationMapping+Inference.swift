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
        var inference = Inference(source: recorded, model: model, computed: computed)
        return try inference.run()
    }
}

/// The state of one inference: which old entity each new one comes from, then property by property.
private struct Inference {
    let source: SchemaPayload
    let model: ObjectModel
    let target: SchemaPayload
    /// Per old entity name, the new properties a custom stage computes.
    let computed: [String: Set<String>]
    var changes: [MigrationChange] = []
    /// For each new entity, the index of the old entity it continues (`nil`: added).
    var origins: [Int?] = []

    init(source: SchemaPayload, model: ObjectModel, computed: [String: Set<String>]) {
        self.source = source
        self.model = model
        self.computed = computed
        self.target = model.schema
    }

    mutating func run() throws(EventGraphError) -> MigrationMapping {
        try matchEntities()
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
    private mutating func matchEntities() throws(EventGraphError) {
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

    /// The new name of an old entity, or its old name when it was removed.
    private func newName(ofOldEntity name: String) -> String {
        for (newIndex, origin) in origins.enumerated() where origin.map({ source.entities[$0].name }) == name {
            return model.entities[newIndex].name
        }
        if let entity = model.entities.first(where: { $0.name == name }) { return entity.name }
        return name
    }

    private mutating func mapProperties(of oldIndex: Int, to newIndex: Int, entityTargets: [UInt32?])
        throws(EventGraphError) -> [MigrationMapping.PropertyTarget?]
    {
        let old = source.entities[oldIndex]
        let new = model.entities[newIndex]
        var targets = [MigrationMapping.PropertyTarget?](repeating: nil, count: old.properties.count)
        let oldPositions = Dictionary(
            old.properties.enumerated().filter { SchemaCatalog.isPersistent($1) }.map { ($1.name, $0) },
            uniquingKeysWith: { first, _ in first })
        var used: Set<Int> = []
        let computedNames = computed[old.name] ?? []
        for property in new.properties where property.isPersistent {
            if computedNames.contains(property.name) {
                // The code sets it; an old property of the same name is read by the code, not copied.
                if let position = oldPositions[property.name] { used.insert(position) }
                note(.computed, new, property.name, "computed by the migration plan's custom stage")
                continue
            }
            let original: String? =
                switch property {
                case .attribute(let attribute): attribute.originalName
                case .relationship(let relationship): relationship.originalName
                }
            guard let position = original.flatMap({ oldPositions[$0] }) ?? oldPositions[property.name] else {
                try checkAdded(property, in: new)
                continue
            }
            used.insert(position)
            let oldProperty = old.properties[position]
            if oldProperty.name != property.name {
                changes.append(
                    MigrationChange(
                        kind: .propertyRenamed, entityName: new.name, propertyName: property.name,
                        detail: "renamed from \(oldProperty.name)"))
            }
            targets[position] = try mapProperty(
                oldProperty, of: old, to: property, in: new, entityTargets: entityTargets)
        }
        for (position, property) in old.properties.enumerated()
        where SchemaCatalog.isPersistent(property) && !used.contains(position) {
            changes.append(
                MigrationChange(
                    kind: .propertyRemoved, entityName: new.name, propertyName: property.name,
                    detail: "removed, with its values"))
        }
        recordConstraintChanges(of: old, new: new)
        return targets
    }

    private mutating func checkAdded(_ property: PropertyDescription, in entity: EntityDescription)
        throws(EventGraphError)
    {
        if computed.values.contains(where: { $0.contains("\(entity.name).\(property.name)") }) {
            note(.computed, entity, property.name, "computed by the migration plan's custom stage")
            return
        }
        if case .attribute(let attribute) = property, !attribute.isOptional, attribute.defaultValue == .null {
            throw EventGraphError(
                .modelMismatch,
                "\(entity.name).\(attribute.name) is added as a required attribute without a default value: give it "
                    + "a default, make it optional, or a migration plan must provide a custom stage that sets it on "
                    + "every existing \(entity.name)")
        }
        if case .relationship(let relationship) = property, let inverse = relationship.inverseName,
            let destination = origins[relationship.destinationEntityIndex],
            source.entities[destination].properties.contains(where: { $0.name == inverse })
        {
            throw EventGraphError(
                .modelMismatch,
                "\(entity.name).\(relationship.name) is added as the inverse of the existing relationship "
                    + "\(relationship.destinationEntityName).\(inverse): a migration plan must provide a custom stage "
                    + "that fills it from the other side")
        }
        changes.append(
            MigrationChange(
                kind: .propertyAdded, entityName: entity.name, propertyName: property.name,
                detail: addedDetail(property)))
    }

    private func addedDetail(_ property: PropertyDescription) -> String {
        guard case .attribute(let attribute) = property, attribute.defaultValue != .null else { return "added" }
        return "added with default \(attribute.defaultValue)"
    }

    private mutating func mapProperty(
        _ old: PropertySchema, of oldEntity: EntitySchema, to new: PropertyDescription, in entity: EntityDescription,
        entityTargets: [UInt32?]
    ) throws(EventGraphError) -> MigrationMapping.PropertyTarget {
        var mapped = MigrationMapping.PropertyTarget(index: UInt32(new.relationship?.index ?? new.attribute!.index))
        switch (old, new) {
        case (.attribute(let before), .attribute(let after)):
            if before.type != after.type.attributeType {
                guard Self.widens(before.type, to: after.type.attributeType) else {
                    throw EventGraphError(
                        .modelMismatch,
                        "\(entity.name).\(after.name) changes type from \(before.type) to \(after.type), which cannot "
                            + "be inferred (only Int16 → Int32 → Int64 and Float → Double are): a migration plan must "
                            + "provide a custom stage that computes the new \(after.type) value from the old one")
                }
                mapped.widenedType = after.type.attributeType
                note(.numberWidened, entity, after.name, "widened from \(before.type) to \(after.type)")
            }
            if before.isOptional && !after.isOptional {
                guard after.defaultValue != .null else {
                    throw EventGraphError(
                        .modelMismatch,
                        "\(entity.name).\(after.name) becomes required but has no default value: give it a default, "
                            + "or a migration plan must provide a custom stage that sets it where it is empty")
                }
                mapped.nullReplacement = after.defaultValue.attributeValue
                note(.madeRequired, entity, after.name, "required now; empty values become \(after.defaultValue)")
            } else if !before.isOptional && after.isOptional {
                note(.madeOptional, entity, after.name, "optional now")
            }
        case (.relationship(let before), .relationship(let after)):
            let destination = source.entities.firstIndex { $0.name == before.destinationEntityName }
            guard let destination, entityTargets[destination] == UInt32(after.destinationEntityIndex) else {
                throw EventGraphError(
                    .modelMismatch,
                    "\(entity.name).\(after.name) points to \(after.destinationEntityName) instead of "
                        + "\(before.destinationEntityName): a migration plan must provide a custom stage that relates "
                        + "the new targets")
            }
            let oldInverse = before.inverseName.flatMap { inverse in
                inverseName(ofOld: inverse, inEntity: destination, newEntity: after.destinationEntityIndex)
            }
            guard oldInverse == after.inverseName else {
                throw EventGraphError(
                    .modelMismatch,
                    "\(entity.name).\(after.name)'s inverse changes from \(before.inverseName ?? "none") to "
                        + "\(after.inverseName ?? "none"): a migration plan must provide a custom stage that relates "
                        + "both sides")
            }
            if before.isToMany && !after.isToMany {
                throw EventGraphError(
                    .modelMismatch,
                    "\(entity.name).\(after.name) becomes to-one but holds several targets today: a migration plan "
                        + "must provide a custom stage that chooses the one to keep")
            }
            if !before.isToMany && after.isToMany {
                mapped.becomesToMany = true
                note(.toOneBecameToMany, entity, after.name, "to-many now")
            } else if before.isOrdered != after.isOrdered {
                note(.orderingChanged, entity, after.name, after.isOrdered ? "ordered now" : "unordered now")
            }
        default:
            throw EventGraphError(
                .modelMismatch,
                "\(entity.name).\(new.name) changes from \(old.kindName) to \(new.kindName): a migration plan must "
                    + "provide a custom stage that computes it")
        }
        return mapped
    }

    /// The new name of an old relationship (`inverse` of old entity `oldEntity`), in the new entity `newEntity`.
    private func inverseName(ofOld inverse: String, inEntity oldEntity: Int, newEntity: Int) -> String? {
        for property in model.entities[newEntity].properties {
            guard let relationship = property.relationship else { continue }
            if (relationship.originalName ?? relationship.name) == inverse || relationship.name == inverse {
                return relationship.name
            }
        }
        return nil
    }

    private mutating func recordConstraintChanges(of old: EntitySchema, new: EntityDescription) {
        // Constraints and indexes name properties: compare them under the new names.
        let renamed = Dictionary(
            new.properties.compactMap { property -> (String, String)? in
                let original = property.attribute?.originalName ?? property.relationship?.originalName
                return original.map { ($0, property.name) }
            }, uniquingKeysWith: { first, _ in first })
        func canonical(_ lists: [[String]]) -> Set<[String]> {
            Set(lists.map { $0.map { renamed[$0] ?? $0 }.sorted() })
        }
        let before = canonical(old.uniquenessConstraints)
        let after = canonical(new.uniquenessConstraints)
        for names in after.subtracting(before).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            changes.append(
                MigrationChange(
                    kind: .uniquenessConstraintAdded, entityName: new.name, propertyName: names.joined(separator: ","),
                    detail: "unique now (existing duplicates refuse the migration)"))
        }
        for names in before.subtracting(after).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            changes.append(
                MigrationChange(
                    kind: .uniquenessConstraintRemoved, entityName: new.name,
                    propertyName: names.joined(separator: ","), detail: "no longer unique"))
        }
        if canonical(old.indexes) != canonical(new.indexes) {
            changes.append(
                MigrationChange(
                    kind: .indexesChanged, entityName: new.name, propertyName: nil,
                    detail: "indexes \(new.indexes.map { $0.joined(separator: ",") })"))
        }
    }

    private mutating func note(
        _ kind: MigrationChange.Kind, _ entity: EntityDescription, _ property: String, _ detail: String
    ) {
        changes.append(MigrationChange(kind: kind, entityName: entity.name, propertyName: property, detail: detail))
    }

    /// Whether every value of `old` is exactly a value of `new`.
    static func widens(_ old: AttributeType, to new: AttributeType) -> Bool {
        switch (old, new) {
        case (.int16, .int32), (.int16, .int64), (.int32, .int64), (.float, .double): true
        default: false
        }
    }
}

extension PropertySchema {
    fileprivate var kindName: String {
        switch self {
        case .attribute(let attribute): "a \(attribute.type) attribute"
        case .relationship(let relationship): relationship.isToMany ? "a to-many relationship" : "a to-one relationship"
        }
    }
}

extension PropertyDescription {
    fileprivate var kindName: String {
        switch self {
        case .attribute(let attribute): "a \(attribute.type) attribute"
        case .relationship(let relationship): relationship.isToMany ? "a to-many relationship" : "a to-one relationship"
        }
    }
}
