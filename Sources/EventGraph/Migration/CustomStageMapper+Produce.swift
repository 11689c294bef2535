import LogFormat

extension CustomStageMapper {
    /// What the code made of one old object: an object under the new model and its values, and which of its
    /// relationships the code set to objects it did not create (their inverses are on those objects).
    struct ProducedObject {
        var reference: ObjectReference
        var properties: [UInt32: PropertyValue]
        var externalRelationships: [UInt32] = []
    }

    /// One object on the other side of a relationship, and the index and kind of its inverse.
    struct InverseSide {
        var target: ObjectReference
        var inverse: UInt32
        var isToMany: Bool
    }

    /// Runs the stage's code for one old object with its complete `values`, and returns what it becomes: the object
    /// under the new model (inference's values overlaid with the code's) and the objects the code created beside
    /// it, each with every value it sets.
    ///
    /// - Throws: ``EventGraphError`` naming the stage, entity, object and transaction when the code throws, or
    ///   when a created object's key would not fit.
    func produce(_ object: ObjectReference, _ values: [PropertyValue], transactionID: UInt64?) throws
        -> [ProducedObject]
    {
        let oldEntityIndex = Int(object.entityIndex)
        guard let migration = migrations[oldEntityIndex], let target = inference.map(object) else { return [] }
        let oldEntity = mapping.sourceSchema.entities[oldEntityIndex]
        let newEntity = mapping.targetSchema.entities[Int(target.entityIndex)]
        var properties: [UInt32: PropertyValue] = [:]
        let all = values.enumerated().map { PropertyChange(propertyIndex: UInt32($0), value: $1) }
        for change in inference.map(all, of: object) { properties[change.propertyIndex] = change.value }

        var migrated = MigratedObject(entityName: newEntity.name)
        do {
            try migration.migrate(readable(object, values, of: oldEntity), &migrated)
        } catch {
            let place = transactionID.map { "in transaction \($0)" } ?? "in a checkpoint"
            throw EventGraphError(
                .modelMismatch,
                "the custom stage to \(stageName) failed for \(oldEntity.name) #\(object.key) \(place): \(error); "
                    + "the store was not changed")
        }
        for (name, value) in migrated.values {
            let index = Self.attributeIndex(name, in: newEntity, value: value)
            properties[index] = .attribute(value.attributeValue)
        }
        var main = ProducedObject(reference: target, properties: properties)
        main.externalRelationships = relate(&main.properties, of: newEntity, to: migrated.relationships)
        var produced: [ProducedObject] = []
        for (name, createdObject) in migrated.relatedObjects.sorted(by: { $0.key < $1.key }) {
            let (relationshipIndex, relationship) = Self.relationship(name, in: newEntity)
            guard
                let destination = mapping.targetSchema.entities.firstIndex(where: {
                    $0.name == relationship.destinationEntityName
                })
            else { preconditionFailure("\(newEntity.name).\(name) leads to no entity of \(stageName)") }
            let created = ObjectReference(
                entityIndex: UInt32(destination), key: try Self.createdKey(for: object.key, relationshipIndex))
            let destinationEntity = mapping.targetSchema.entities[destination]
            var createdProduct = ProducedObject(reference: created, properties: [:])
            for (attribute, value) in createdObject.values {
                createdProduct.properties[Self.attributeIndex(attribute, in: destinationEntity, value: value)] =
                    .attribute(value.attributeValue)
            }
            createdProduct.externalRelationships = relate(
                &createdProduct.properties, of: destinationEntity, to: createdObject.relationships)
            // The log records both sides of a relationship.
            if let inverse = relationship.inverseName {
                let (inverseIndex, inverseRelationship) = Self.relationship(inverse, in: destinationEntity)
                createdProduct.properties[inverseIndex] =
                    inverseRelationship.isToMany ? .toMany([target]) : .toOne(target)
            }
            main.properties[relationshipIndex] = relationship.isToMany ? .toMany([created]) : .toOne(created)
            produced.append(createdProduct)
        }
        return [main] + produced
    }

    /// The old object as the code reads it: its attributes (not its external values, which stay in the log's blob
    /// frames and which inference carries over) and the objects its relationships lead to.
    private func readable(_ object: ObjectReference, _ values: [PropertyValue], of oldEntity: EntitySchema)
        -> MigratingObject
    {
        var attributes: [String: StoredValue] = [:]
        var relationships: [String: [MigrationObjectReference]] = [:]
        for (index, property) in oldEntity.properties.enumerated() {
            switch (property, values[index]) {
            case (.attribute, .attribute(.blob)):
                continue
            case (.attribute, .attribute(let value)):
                attributes[property.name] = StoredValue(value)
            case (.relationship, .toOne(let reference)):
                relationships[property.name] = reference.flatMap(oldReference).map { [$0] } ?? []
            case (.relationship, .toMany(let references)):
                relationships[property.name] = references.compactMap(oldReference)
            default:
                continue
            }
        }
        return MigratingObject(
            entityName: oldEntity.name, key: object.key, values: attributes, relationships: relationships)
    }

    /// An object of this store under the old model, as the code sees it (`nil` for another store's).
    private func oldReference(_ reference: ObjectReference) -> MigrationObjectReference? {
        guard reference.storeIndex == 0, Int(reference.entityIndex) < mapping.sourceSchema.entities.count else {
            return nil
        }
        return MigrationObjectReference(
            entityName: mapping.sourceSchema.entities[Int(reference.entityIndex)].name, key: reference.key)
    }

    /// Sets the relationships the code related to existing objects on an object of `entity`; returns their indices.
    ///
    /// A programmer error when a name is no relationship, a to-one gets more than one object, or a target is of an
    /// entity the stage migrates with code or that the new model removed.
    private func relate(
        _ properties: inout [UInt32: PropertyValue], of entity: EntitySchema,
        to relationships: [String: [MigrationObjectReference]]
    ) -> [UInt32] {
        var indices: [UInt32] = []
        for (name, targets) in relationships {
            let (index, relationship) = Self.relationship(name, in: entity)
            precondition(
                relationship.isToMany || targets.count <= 1,
                "a custom migration stage relates \(entity.name).\(name), a to-one, to \(targets.count) objects")
            let mapped = targets.map { newReference($0, from: entity.name, name) }
            properties[index] = relationship.isToMany ? .toMany(mapped) : .toOne(mapped.first)
            indices.append(index)
        }
        return indices.sorted()
    }

    /// The object `reference` (of the old model) becomes.
    private func newReference(_ reference: MigrationObjectReference, from entityName: String, _ name: String)
        -> ObjectReference
    {
        guard let oldIndex = mapping.sourceSchema.entities.firstIndex(where: { $0.name == reference.entityName }),
            let mapped = inference.map(ObjectReference(entityIndex: UInt32(oldIndex), key: reference.key))
        else {
            preconditionFailure(
                "a custom migration stage relates \(entityName).\(name) to \(reference), whose entity the new model "
                    + "does not have")
        }
        precondition(
            migrations[oldIndex] == nil,
            "a custom migration stage relates \(entityName).\(name) to \(reference), whose entity the same stage "
                + "migrates with code: relate the objects from one side only")
        return mapped
    }

    /// The objects relationship `property` of `source` leads to in `properties`, each with its inverse.
    func inverseSides(of source: ObjectReference, _ property: UInt32, _ properties: [UInt32: PropertyValue])
        -> [InverseSide]
    {
        let entity = mapping.targetSchema.entities[Int(source.entityIndex)]
        guard case .relationship(let relationship) = entity.properties[Int(property)],
            let inverseName = relationship.inverseName
        else { return [] }
        let targets: [ObjectReference] =
            switch properties[property] {
            case .toOne(let target?): [target]
            case .toMany(let targets): targets
            default: []
            }
        return targets.compactMap { target in
            let destination = mapping.targetSchema.entities[Int(target.entityIndex)]
            guard let index = destination.properties.firstIndex(where: { $0.name == inverseName }),
                case .relationship(let inverse) = destination.properties[index]
            else { return nil }
            return InverseSide(target: target, inverse: UInt32(index), isToMany: inverse.isToMany)
        }
    }

    /// The key of the object created beside old object `key` through the relationship at `relationshipIndex`.
    static func createdKey(for key: UInt64, _ relationshipIndex: UInt32) throws -> UInt64 {
        let (scaled, overflow) = key.multipliedReportingOverflow(by: createdKeyStride)
        let (created, carry) = createdKeyBase.addingReportingOverflow(scaled + UInt64(relationshipIndex))
        guard !overflow, !carry, UInt64(relationshipIndex) < createdKeyStride, created < Store.exhaustedKey else {
            throw EventGraphError(
                .invalidArgument,
                "object key \(key) is too large for a custom stage to create objects beside it (at most "
                    + "\((Store.exhaustedKey - createdKeyBase) / createdKeyStride))")
        }
        return created
    }

    /// The index of attribute `name` of `entity`; a programmer error when there is none or `value` does not fit.
    private static func attributeIndex(_ name: String, in entity: EntitySchema, value: StoredValue) -> UInt32 {
        guard let index = entity.properties.firstIndex(where: { $0.name == name }),
            case .attribute(let attribute) = entity.properties[index]
        else { preconditionFailure("a custom migration stage sets \(entity.name).\(name), which is no attribute") }
        let stored = value.attributeValue
        precondition(
            stored == .null || stored.fits(attribute.type),
            "a custom migration stage sets \(entity.name).\(name) (\(attribute.type)) to \(value)")
        return UInt32(index)
    }

    /// The relationship `name` of `entity`; a programmer error when there is none.
    private static func relationship(_ name: String, in entity: EntitySchema) -> (UInt32, RelationshipSchema) {
        guard let index = entity.properties.firstIndex(where: { $0.name == name }),
            case .relationship(let relationship) = entity.properties[index]
        else {
            preconditionFailure("a custom migration stage relates \(entity.name).\(name), which is no relationship")
        }
        return (UInt32(index), relationship)
    }
}
