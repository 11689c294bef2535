extension ObjectModel {
    /// The configuration of the entities no configuration lists (and of every entity of a model without
    /// configurations).
    public static let defaultConfigurationName = "Default"

    /// The configuration an entity belongs to: the store that holds its objects in a container with several stores.
    public func configurationName(of entity: EntityDescription) -> String {
        entityConfigurationNames[entity.index]
    }

    /// The configurations that hold at least one entity, sorted by name; a container with several stores needs one
    /// store for each.
    public var configurationNames: [String] {
        Set(entityConfigurationNames).sorted()
    }

    /// The entities of each named configuration, as the model was built with them (kept by a reordering).
    var configurationMembers: [String: [String]] {
        var members: [String: [String]] = [:]
        for entity in entities where entityConfigurationNames[entity.index] != Self.defaultConfigurationName {
            members[entityConfigurationNames[entity.index], default: []].append(entity.name)
        }
        return members
    }

    /// Each entity's configuration: the one that lists it, else its nearest listed super-entity's, else the default.
    ///
    /// - Throws: ``EventGraphError/Code/invalidModel`` when a configuration lists an entity the model lacks, or an
    ///   entity is listed in two configurations.
    static func configurationNames(
        of entities: [EntityDescription], members: [String: [String]], indexByName: [String: Int]
    ) throws(EventGraphError) -> [String] {
        var listed: [String?] = Array(repeating: nil, count: entities.count)
        // Sorted, so that the error for an entity listed twice names the same two configurations on every run.
        for (configuration, names) in members.sorted(by: { $0.key < $1.key }) {
            guard !configuration.isEmpty else {
                throw EventGraphError(.invalidModel, "a configuration of the model has an empty name")
            }
            for name in names {
                guard let index = indexByName[name] else {
                    throw EventGraphError(
                        .invalidModel, "configuration '\(configuration)' lists '\(name)', which is not an entity")
                }
                if let other = listed[index], other != configuration {
                    throw EventGraphError(
                        .invalidModel,
                        "the entity '\(name)' is listed in two configurations, '\(other)' and '\(configuration)'; "
                            + "its objects can be kept in one store only")
                }
                listed[index] = configuration
            }
        }
        // A log may list sub-entities before their super-entity, so each entity walks up its own chain (the
        // resolver has already refused cycles).
        var resolved: [String] = []
        resolved.reserveCapacity(entities.count)
        for entity in entities {
            var current: Int? = entity.index
            var found: String?
            while let index = current, found == nil {
                found = listed[index]
                current = entities[index].superentityIndex
            }
            resolved.append(found ?? defaultConfigurationName)
        }
        return resolved
    }
}
