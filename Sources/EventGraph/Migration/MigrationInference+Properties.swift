import LogFormat

/// Inference, property by property: what each old property becomes, and what is refused.
extension MigrationInference {
    mutating func mapProperties(of oldIndex: Int, to newIndex: Int, entityTargets: [UInt32?])
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
            if computedInverses.contains("\(new.name).\(property.name)") {
                // The code writes both sides of the relationships it sets; the old values of this side are dropped.
                if let position = oldPositions[property.name] { used.insert(position) }
                note(.computed, new, property.name, "the inverse of a relationship the custom stage sets")
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

    mutating func checkAdded(_ property: PropertyDescription, in entity: EntityDescription)
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

    func addedDetail(_ property: PropertyDescription) -> String {
        guard case .attribute(let attribute) = property, attribute.defaultValue != .null else { return "added" }
        return "added with default \(attribute.defaultValue)"
    }

    mutating func mapProperty(
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
    func inverseName(ofOld inverse: String, inEntity oldEntity: Int, newEntity: Int) -> String? {
        for property in model.entities[newEntity].properties {
            guard let relationship = property.relationship else { continue }
            if (relationship.originalName ?? relationship.name) == inverse || relationship.name == inverse {
                return relationship.name
            }
        }
        return nil
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
    var kindName: String {
        switch self {
        case .attribute(let attribute): "a \(attribute.type) attribute"
        case .relationship(let relationship): relationship.isToMany ? "a to-many relationship" : "a to-one relationship"
        }
    }
}

extension PropertyDescription {
    var kindName: String {
        switch self {
        case .attribute(let attribute): "a \(attribute.type) attribute"
        case .relationship(let relationship): relationship.isToMany ? "a to-many relationship" : "a to-one relationship"
        }
    }
}
