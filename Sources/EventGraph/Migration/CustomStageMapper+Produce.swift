import LogFormat

extension CustomStageMapper {
    /// Runs the stage's code for one old object with its complete `values`, and returns what it becomes: the object
    /// under the new model (inference's values overlaid with the code's) and the objects the code created beside
    /// it, each with every value it sets.
    ///
    /// - Throws: ``EventGraphError`` naming the stage, entity, object and transaction when the code throws, or
    ///   when a created object's key would not fit.
    func produce(_ object: ObjectReference, _ values: [PropertyValue], transactionID: UInt64?) throws
        -> [(ObjectReference, [UInt32: PropertyValue])]
    {
        let oldEntityIndex = Int(object.entityIndex)
        guard let migration = migrations[oldEntityIndex], let target = inference.map(object) else { return [] }
        let oldEntity = mapping.sourceSchema.entities[oldEntityIndex]
        let newEntity = mapping.targetSchema.entities[Int(target.entityIndex)]
        var properties: [UInt32: PropertyValue] = [:]
        let all = values.enumerated().map { PropertyChange(propertyIndex: UInt32($0), value: $1) }
        for change in inference.map(all, of: object) { properties[change.propertyIndex] = change.value }

        var readable: [String: StoredValue] = [:]
        for (index, property) in oldEntity.properties.enumerated() {
            // External values stay in the log's blob frames; inference carries them over.
            guard case .attribute = property, case .attribute(let value) = values[index] else { continue }
            if case .blob = value { continue }
            readable[property.name] = StoredValue(value)
        }
        var migrated = MigratedObject(entityName: newEntity.name)
        do {
            try migration.migrate(
                MigratingObject(entityName: oldEntity.name, key: object.key, values: readable), &migrated)
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
        var produced: [(ObjectReference, [UInt32: PropertyValue])] = []
        for (name, createdValues) in migrated.relatedObjects.sorted(by: { $0.key < $1.key }) {
            let (relationshipIndex, relationship) = Self.relationship(name, in: newEntity)
            guard
                let destination = mapping.targetSchema.entities.firstIndex(where: {
                    $0.name == relationship.destinationEntityName
                })
            else { preconditionFailure("\(newEntity.name).\(name) leads to no entity of \(stageName)") }
            let created = ObjectReference(
                entityIndex: UInt32(destination), key: try Self.createdKey(for: object.key, relationshipIndex))
            let destinationEntity = mapping.targetSchema.entities[destination]
            var createdProperties: [UInt32: PropertyValue] = [:]
            for (attribute, value) in createdValues {
                createdProperties[Self.attributeIndex(attribute, in: destinationEntity, value: value)] =
                    .attribute(value.attributeValue)
            }
            // The log records both sides of a relationship.
            if let inverse = relationship.inverseName {
                let (inverseIndex, inverseRelationship) = Self.relationship(inverse, in: destinationEntity)
                createdProperties[inverseIndex] = inverseRelationship.isToMany ? .toMany([target]) : .toOne(target)
            }
            properties[relationshipIndex] = relationship.isToMany ? .toMany([created]) : .toOne(created)
            produced.append((created, createdProperties))
        }
        return [(target, properties)] + produced
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
