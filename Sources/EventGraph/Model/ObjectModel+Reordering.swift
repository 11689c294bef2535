import LogFormat

extension ObjectModel {
    /// This model with its entities in the order of `names`, which must name each entity once.
    ///
    /// Entity indices are part of a log's bytes, so a store keeps the entity order its log recorded even when the
    /// application lists its classes in another order (the shape, and therefore ``hash``, does not depend on it).
    func reordered(as names: [String]) throws(EventGraphError) -> ObjectModel {
        precondition(
            names.count == entities.count && Set(names) == Set(entities.map(\.name)),
            "a reordering must name each entity of the model once")
        guard names != entities.map(\.name) else { return self }
        let drafts = names.map { name in EntityDraft(entity: entity(named: name)!) }
        return try ObjectModel(
            name: name, version: versionIdentifier, drafts: drafts, configurations: configurationMembers)
    }
}

extension EntityDraft {
    /// A draft of an entity that was already resolved (its inverses are already symmetric).
    init(entity: EntityDescription) {
        name = entity.name
        superentityName = entity.superentityName
        isAbstract = entity.isAbstract
        propertyCount = entity.properties.count
        uniquenessConstraints = entity.uniquenessConstraints
        indexes = entity.indexes
        objectClass = entity.objectClass
        hasInstanceDefaults = entity.hasInstanceDefaults
        fetchedProperties = entity.fetchedProperties.map {
            FetchedPropertySeed(name: $0.name, definition: $0.definition)
        }
        for (index, property) in entity.properties.enumerated() {
            switch property {
            case .attribute(let attribute):
                attributes[index] = attribute
            case .relationship(let r):
                relationships[index] = RelationshipDraft(
                    name: r.name, destinationName: r.destinationEntityName, inverseName: r.inverseName,
                    isToMany: r.isToMany, isOrdered: r.isOrdered, isOptional: r.isOptional,
                    deleteRule: r.deleteRule.deleteRule,
                    minimumCount: r.minimumCount, maximumCount: r.maximumCount)
            }
        }
    }
}
