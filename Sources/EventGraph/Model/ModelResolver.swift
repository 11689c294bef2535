import LogFormat

/// Resolves entity drafts into descriptions: names to indices, inverses made symmetric, constraints checked.
struct ModelResolver {
    var drafts: [EntityDraft]
    let indexByName: [String: Int]

    init(drafts: [EntityDraft], indexByName: [String: Int]) {
        self.drafts = drafts
        self.indexByName = indexByName
    }

    mutating func resolve() throws(EventGraphError) -> [EntityDescription] {
        try makeInversesSymmetric()
        var entities: [EntityDescription] = []
        for (index, draft) in drafts.enumerated() {
            var superIndex: Int?
            if let superName = draft.superentityName {
                guard let found = indexByName[superName] else {
                    throw EventGraphError(
                        .invalidModel, "\(draft.name)'s superentity '\(superName)' is not part of the model")
                }
                let superDraft = drafts[found]
                guard superDraft.propertyCount <= draft.propertyCount else {
                    throw EventGraphError(.invalidModel, "\(draft.name) has fewer properties than its superentity")
                }
                superIndex = found
            }
            var properties: [PropertyDescription] = []
            for position in 0..<draft.propertyCount {
                if let attribute = draft.attributes[position] {
                    properties.append(.attribute(attribute))
                } else if let relationship = draft.relationships[position] {
                    properties.append(.relationship(try resolve(relationship, at: position, in: draft)))
                }
            }
            entities.append(
                EntityDescription(
                    name: draft.name, index: index, superentityName: draft.superentityName,
                    superentityIndex: superIndex, isAbstract: draft.isAbstract, properties: properties,
                    uniquenessConstraints: draft.uniquenessConstraints, indexes: draft.indexes,
                    objectClass: draft.objectClass, hasInstanceDefaults: draft.hasInstanceDefaults,
                    originalName: draft.originalName))
        }
        try linkFamilies(entities)
        return entities
    }

    /// An inverse named on one side only is recorded on both; contradicting declarations are an error.
    private mutating func makeInversesSymmetric() throws(EventGraphError) {
        for entityIndex in drafts.indices {
            for (position, relationship) in drafts[entityIndex].relationships {
                guard let inverseName = relationship.inverseName else { continue }
                let owner = drafts[entityIndex].name
                guard let destination = indexByName[relationship.destinationName] else {
                    throw EventGraphError(
                        .invalidModel,
                        "\(owner).\(relationship.name)'s destination '\(relationship.destinationName)' is not part of the model"
                    )
                }
                guard
                    let (inversePosition, inverse) = drafts[destination].relationships.first(where: {
                        $0.value.name == inverseName
                    })
                else {
                    throw EventGraphError(
                        .invalidModel,
                        "\(owner).\(relationship.name)'s inverse '\(inverseName)' is not a relationship of \(relationship.destinationName)"
                    )
                }
                if let back = inverse.inverseName, back != relationship.name {
                    throw EventGraphError(
                        .invalidModel,
                        "\(owner).\(relationship.name) names '\(inverseName)' as inverse, but \(relationship.destinationName).\(inverseName) names '\(back)'"
                    )
                }
                guard indexByName[inverse.destinationName].map({ isAncestor($0, of: entityIndex) }) ?? false else {
                    throw EventGraphError(
                        .invalidModel,
                        "\(relationship.destinationName).\(inverseName) points to \(inverse.destinationName), not to \(owner)"
                    )
                }
                // Record the inverse in every entity of the destination's family that inherits the relationship.
                for familyMember in drafts.indices where isAncestor(destination, of: familyMember) {
                    drafts[familyMember].relationships[inversePosition]?.inverseName = relationship.name
                }
                _ = position
            }
        }
    }

    private func isAncestor(_ ancestor: Int, of entity: Int) -> Bool {
        var current: Int? = entity
        while let index = current {
            if index == ancestor { return true }
            current = drafts[index].superentityName.flatMap { indexByName[$0] }
        }
        return false
    }

    private func resolve(_ draft: EntityDraft.RelationshipDraft, at position: Int, in entity: EntityDraft)
        throws(EventGraphError) -> RelationshipDescription
    {
        guard let destination = indexByName[draft.destinationName] else {
            throw EventGraphError(
                .invalidModel,
                "\(entity.name).\(draft.name)'s destination '\(draft.destinationName)' is not part of the model")
        }
        var inverseIndex: Int?
        if let inverseName = draft.inverseName {
            inverseIndex = drafts[destination].relationships.first(where: { $0.value.name == inverseName })?.key
        }
        return RelationshipDescription(
            name: draft.name, index: position, destinationEntityName: draft.destinationName,
            destinationEntityIndex: destination, inverseName: draft.inverseName, inverseIndex: inverseIndex,
            isToMany: draft.isToMany, isOrdered: draft.isOrdered, isOptional: draft.isOptional,
            deleteRule: RelationshipDeleteRule(draft.deleteRule), minimumCount: draft.minimumCount,
            maximumCount: draft.maximumCount, originalName: draft.originalName)
    }

    private func linkFamilies(_ entities: [EntityDescription]) throws(EventGraphError) {
        for entity in entities {
            if let superIndex = entity.superentityIndex { entities[superIndex].subentityIndices.append(entity.index) }
            var family: [Int] = []
            for other in entities where isAncestor(entity.index, of: other.index) { family.append(other.index) }
            family.removeAll { $0 == entity.index }
            entity.familyIndices = [entity.index] + family
        }
        var ordinals: [[UniqueConstraint]] = Array(repeating: [], count: entities.count)
        for entity in entities {
            for (ordinal, names) in entity.uniquenessConstraints.enumerated() {
                var indices: [Int] = []
                for name in names {
                    guard let index = entity.propertyIndexByName[name], entity.properties[index].attribute != nil
                    else {
                        throw EventGraphError(
                            .invalidModel,
                            "\(entity.name)'s uniqueness constraint names '\(name)', which is not an attribute")
                    }
                    indices.append(index)
                }
                ordinals[entity.index].append(
                    UniqueConstraint(
                        entityIndex: entity.index, ordinal: ordinal, propertyIndices: indices, propertyNames: names))
            }
            for names in entity.indexes {
                for name in names where entity.attribute(named: name) == nil {
                    throw EventGraphError(
                        .invalidModel, "\(entity.name)'s index names '\(name)', which is not an attribute")
                }
            }
        }
        for entity in entities {
            var constraints: [UniqueConstraint] = []
            var current: Int? = entity.index
            while let index = current {
                constraints += ordinals[index]
                current = entities[index].superentityIndex
            }
            entity.uniqueConstraints = constraints
            // Indexed attributes (unique ones included) and the leading attribute of each compound index, own or
            // inherited, when its type has an order the index can keep.
            var indexed: [Int] = []
            for (index, property) in entity.properties.enumerated() {
                guard let attribute = property.attribute, attribute.isIndexed else { continue }
                indexed.append(index)
            }
            current = entity.index
            while let index = current {
                for names in entities[index].indexes {
                    if let first = names.first, let position = entity.propertyIndexByName[first] {
                        indexed.append(position)
                    }
                }
                current = entities[index].superentityIndex
            }
            var seen: Set<Int> = []
            entity.indexedPropertyIndices = indexed.filter { index in
                guard let attribute = entity.properties[index].attribute, !attribute.isTransient,
                    AttributeIndex.canIndex(attribute.type.attributeType)
                else { return false }
                return seen.insert(index).inserted
            }
        }
    }
}

extension EntityDescription {
    /// The entity as the log's schema records it.
    var entitySchema: EntitySchema {
        EntitySchema(
            name: name, superentityName: superentityName, isAbstract: isAbstract,
            properties: properties.map { property in
                switch property {
                case .attribute(let a):
                    .attribute(
                        AttributeSchema(
                            name: a.name, type: a.type.attributeType, isOptional: a.isOptional,
                            isTransient: a.isTransient,
                            defaultValue: a.defaultValue == .null ? nil : a.defaultValue.attributeValue,
                            externalStorageThreshold: a.externalStorageThreshold.map { UInt64($0) },
                            transformerName: a.transformerName, originalName: a.originalName))
                case .relationship(let r):
                    .relationship(
                        RelationshipSchema(
                            name: r.name, destinationEntityName: r.destinationEntityName, inverseName: r.inverseName,
                            isToMany: r.isToMany, isOrdered: r.isOrdered, isOptional: r.isOptional,
                            deleteRule: r.deleteRule.deleteRule, minCount: UInt32(clamping: r.minimumCount),
                            maxCount: UInt32(clamping: r.maximumCount), originalName: r.originalName))
                }
            },
            uniquenessConstraints: uniquenessConstraints, indexes: indexes, originalName: originalName)
    }
}
