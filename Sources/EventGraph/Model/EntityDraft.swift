import LogFormat

/// An entity before the model resolves names to indices.
struct EntityDraft {
    var name: String
    var superentityName: String?
    var isAbstract: Bool
    var attributes: [Int: AttributeDescription] = [:]
    var relationships: [Int: RelationshipDraft] = [:]
    var propertyCount: Int
    var uniquenessConstraints: [[String]]
    var indexes: [[String]]
    var objectClass: ManagedObject.Type
    var hasInstanceDefaults: Bool
    /// The entity's name in the previous model version.
    var originalName: String?
    /// The fetched properties of a typed class (a schema records none).
    var fetchedProperties: [FetchedPropertySeed] = []

    struct RelationshipDraft {
        var name: String
        var destinationName: String
        var inverseName: String?
        var isToMany: Bool
        var isOrdered: Bool
        var isOptional: Bool
        var deleteRule: DeleteRule
        var minimumCount: Int
        var maximumCount: Int
        var originalName: String? = nil
    }

    /// A draft from a typed class.
    init(type: ManagedObject.Type, isAbstract: Bool) throws(EventGraphError) {
        let info = ClassRegistry.info(for: type)
        name = type.entityName
        originalName = type.originalEntityName
        superentityName = info.superclassInfo.map { $0.objectClass.entityName }
        self.isAbstract = isAbstract
        propertyCount = info.seeds.count
        objectClass = type
        hasInstanceDefaults = info.hasInstanceDefaults
        var unique: [[String]] = []
        var indexes: [[String]] = []
        for (index, seed) in info.seeds.enumerated() {
            switch seed {
            case .attribute(let seed):
                var attribute = try AttributeDescription(seed: seed, index: index, entityName: name)
                if info.dynamicDefaultIndices.contains(index) { attribute.defaultValue = .null }
                attributes[index] = attribute
                // Single-attribute constraints belong to the class that declares the attribute.
                let isOwn = index >= (info.superclassInfo?.seeds.count ?? 0)
                if attribute.isUnique && isOwn { unique.append([attribute.name]) }
                if attribute.isIndexed && !attribute.isUnique && isOwn { indexes.append([attribute.name]) }
            case .relationship(let seed):
                relationships[index] = RelationshipDraft(
                    name: seed.name, destinationName: seed.destination.entityName, inverseName: seed.inverseName,
                    isToMany: seed.isToMany, isOrdered: seed.isOrdered, isOptional: seed.isOptional,
                    deleteRule: seed.deleteRule, minimumCount: seed.minimumCount, maximumCount: seed.maximumCount,
                    originalName: seed.originalName)
            }
        }
        // Compound declarations are inherited as class properties; keep only those this class adds.
        let inheritedUnique = info.superclassInfo.map { $0.objectClass.uniquenessConstraints } ?? []
        let inheritedIndexes = info.superclassInfo.map { $0.objectClass.indexes } ?? []
        unique += type.uniquenessConstraints.filter { !inheritedUnique.contains($0) }
        indexes += type.indexes.filter { !inheritedIndexes.contains($0) }
        uniquenessConstraints = unique
        self.indexes = indexes
        fetchedProperties = ClassInfo.fetchedPropertySeeds(of: type)
    }

    /// A draft from a recorded schema.
    init(schema: EntitySchema) {
        name = schema.name
        originalName = schema.originalName
        superentityName = schema.superentityName
        isAbstract = schema.isAbstract
        propertyCount = schema.properties.count
        uniquenessConstraints = schema.uniquenessConstraints
        indexes = schema.indexes
        objectClass = ManagedObject.self
        hasInstanceDefaults = false
        let singleUnique = Set(schema.uniquenessConstraints.filter { $0.count == 1 }.map { $0[0] })
        let singleIndexed = Set(schema.indexes.filter { $0.count == 1 }.map { $0[0] })
        for (index, property) in schema.properties.enumerated() {
            switch property {
            case .attribute(let a):
                attributes[index] = AttributeDescription(
                    name: a.name, index: index, type: a.type, isOptional: a.isOptional, isTransient: a.isTransient,
                    defaultValue: a.defaultValue ?? .null,
                    externalStorageThreshold: a.externalStorageThreshold.map { Int(clamping: $0) },
                    transformerName: a.transformerName, isUnique: singleUnique.contains(a.name),
                    isIndexed: singleIndexed.contains(a.name) || singleUnique.contains(a.name))
                attributes[index]?.originalName = a.originalName
            case .relationship(let r):
                relationships[index] = RelationshipDraft(
                    name: r.name, destinationName: r.destinationEntityName, inverseName: r.inverseName,
                    isToMany: r.isToMany, isOrdered: r.isOrdered, isOptional: r.isOptional, deleteRule: r.deleteRule,
                    minimumCount: Int(r.minCount), maximumCount: Int(r.maxCount), originalName: r.originalName)
            }
        }
    }
}

extension AttributeDescription {
    init(
        name: String, index: Int, type: AttributeType, isOptional: Bool, isTransient: Bool,
        defaultValue: AttributeValue, externalStorageThreshold: Int?, transformerName: String?, isUnique: Bool,
        isIndexed: Bool
    ) {
        self.name = name
        self.index = index
        self.type = StoredValueType(type)
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.defaultValue = StoredValue(defaultValue)
        self.externalStorageThreshold = externalStorageThreshold
        self.transformerName = transformerName
        self.isUnique = isUnique
        self.isIndexed = isIndexed
    }

    init(seed: AttributeSeed, index: Int, entityName: String) throws(EventGraphError) {
        self.init(
            name: seed.name, index: index, type: seed.type, isOptional: seed.isOptional, isTransient: false,
            defaultValue: seed.defaultValue, externalStorageThreshold: nil, transformerName: seed.transformerName,
            isUnique: false, isIndexed: false)
        for option in seed.options {
            switch option.kind {
            case .unique: isUnique = true; isIndexed = true
            case .indexed: isIndexed = true
            case .transient: isTransient = true
            case .externalStorage(let threshold):
                guard type == .binary || type == .transformable else {
                    throw EventGraphError(
                        .invalidModel,
                        "\(entityName).\(name) is \(type); only binary and transformable attributes can be stored externally"
                    )
                }
                externalStorageThreshold = threshold
            case .range(let minimum, let maximum):
                if let minimum { minimumValue = minimum }
                if let maximum { maximumValue = maximum }
            case .length(let minimum, let maximum):
                if let minimum { minimumLength = minimum }
                if let maximum { maximumLength = maximum }
            case .pattern(let pattern):
                self.pattern = pattern
            case .originalName(let name):
                originalName = name
            }
        }
    }
}
