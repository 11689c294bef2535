package import LogFormat

/// Lookups over a ``SchemaPayload``: entity and property names by index, sub-entities, inverses.
package struct SchemaCatalog: Sendable {
    /// The schema this catalog describes.
    package let schema: SchemaPayload
    private let entityIndexByName: [String: Int]
    private let propertyIndexByName: [[String: Int]]
    /// For each entity, itself and every entity that inherits from it (directly or not).
    package let familyIndices: [[Int]]

    /// Indexes the names of `schema`.
    package init(_ schema: SchemaPayload) {
        self.schema = schema
        var byName: [String: Int] = [:]
        for (index, entity) in schema.entities.enumerated() { byName[entity.name] = index }
        entityIndexByName = byName
        propertyIndexByName = schema.entities.map { entity in
            var names: [String: Int] = [:]
            for (index, property) in entity.properties.enumerated() { names[property.name] = index }
            return names
        }
        familyIndices = schema.entities.indices.map { root in
            schema.entities.indices.filter { candidate in
                var current: Int? = candidate
                while let index = current {
                    if index == root { return true }
                    current = schema.entities[index].superentityName.flatMap { byName[$0] }
                }
                return false
            }
        }
    }

    /// The entity at `index`, or nil when the index is out of range.
    package func entity(at index: UInt32) -> EntitySchema? {
        Int(index) < schema.entities.count ? schema.entities[Int(index)] : nil
    }

    /// The entity's name, or `#<index>` when the index is out of range.
    package func entityName(_ index: UInt32) -> String { entity(at: index)?.name ?? "#\(index)" }

    /// The index of the entity called `name`.
    package func entityIndex(named name: String) -> Int? { entityIndexByName[name] }

    /// The index of `entity`'s property called `name`.
    package func propertyIndex(_ name: String, inEntity entity: Int) -> Int? { propertyIndexByName[entity][name] }

    /// The property at `propertyIndex` of the entity at `entityIndex`.
    package func property(_ propertyIndex: UInt32, ofEntity entityIndex: UInt32) -> PropertySchema? {
        guard let entity = entity(at: entityIndex), Int(propertyIndex) < entity.properties.count else { return nil }
        return entity.properties[Int(propertyIndex)]
    }

    /// Whether the property is persisted (transient attributes are described but never written).
    package static func isPersistent(_ property: PropertySchema) -> Bool {
        if case .attribute(let attribute) = property { return !attribute.isTransient }
        return true
    }

    /// The value a property has when an object does not record one: its default, null, no target, no targets.
    package static func defaultValue(of property: PropertySchema) -> PropertyValue {
        switch property {
        case .attribute(let attribute): .attribute(attribute.defaultValue ?? .null)
        case .relationship(let relationship): relationship.isToMany ? .toMany([]) : .toOne(nil)
        }
    }
}
