import LogFormat

/// The persistent shape of a model: exactly what the bytes of a log depend on, and its stable hash.
///
/// Two schemas with the same shape read each other's logs: every entity has the same name, superentity,
/// abstractness and uniqueness constraints, and at every property index the same persistent attribute (name,
/// stored type, optionality) or relationship (name, destination, inverse, to-many, ordered) — or a transient
/// attribute, which only holds the index. Entities are hashed in name order, so the order of the classes in
/// `ObjectModel(types:)` does not matter (the store keeps the entity order its log recorded).
///
/// Everything else is metadata recorded in the schema frame and free to change without a migration: default
/// values (a default is resolved against the schema frame in force when a record was written), indexes, delete
/// rules, relationship counts and optionality, external-storage thresholds, transformer names, transient
/// attributes' names and types, the model's name and version identifier. Uniqueness constraints are part of the
/// shape although no byte depends on them, because a new constraint is a promise about the stored objects that
/// only a migration can check.
enum ModelShape {
    /// The shape hash (64-bit FNV-1a over the canonical shape encoding) of a list of entities.
    static func hash(of entities: [EntitySchema]) -> UInt64 {
        var bytes: [UInt8] = []
        for entity in entities.sorted(by: { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }) {
            append(entity, to: &bytes)
        }
        return StableHash.fnv1a64(bytes)
    }

    private static func append(_ entity: EntitySchema, to bytes: inout [UInt8]) {
        append(entity.name, to: &bytes)
        append(optional: entity.superentityName, to: &bytes)
        bytes.append(entity.isAbstract ? 1 : 0)
        append(count: entity.properties.count, to: &bytes)
        for property in entity.properties {
            switch property {
            case .attribute(let attribute) where attribute.isTransient:
                bytes.append(0)
            case .attribute(let attribute):
                bytes.append(1)
                append(attribute.name, to: &bytes)
                bytes.append(attribute.type.rawValue)
                bytes.append(attribute.isOptional ? 1 : 0)
            case .relationship(let relationship):
                bytes.append(2)
                append(relationship.name, to: &bytes)
                append(relationship.destinationEntityName, to: &bytes)
                append(optional: relationship.inverseName, to: &bytes)
                bytes.append((relationship.isToMany ? 1 : 0) | (relationship.isOrdered ? 2 : 0))
            }
        }
        // A constraint is a set of attributes, and the constraints of an entity are a set too.
        let constraints = entity.uniquenessConstraints.map { $0.sorted() }.sorted { $0.lexicographicallyPrecedes($1) }
        append(count: constraints.count, to: &bytes)
        for names in constraints {
            append(count: names.count, to: &bytes)
            for name in names { append(name, to: &bytes) }
        }
    }

    private static func append(count: Int, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: UInt64(count).littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func append(_ text: String, to bytes: inout [UInt8]) {
        append(count: text.utf8.count, to: &bytes)
        bytes.append(contentsOf: text.utf8)
    }

    private static func append(optional text: String?, to bytes: inout [UInt8]) {
        guard let text else {
            bytes.append(0)
            return
        }
        bytes.append(1)
        append(text, to: &bytes)
    }
}
