import LogFormat

extension LogGraph {
    /// Before a later schema frame changes a default, records the old default in every live object that left the
    /// property out: a record means the default of the schema in force when it was written.
    mutating func keepDefaults(of previous: SchemaCatalog, changingTo next: SchemaCatalog) {
        var changed: [UInt32: [(index: Int, value: PropertyValue)]] = [:]
        for (entityIndex, entity) in previous.schema.entities.enumerated() {
            for (index, property) in entity.properties.enumerated() {
                guard SchemaCatalog.isPersistent(property),
                    let replacement = next.property(UInt32(index), ofEntity: UInt32(entityIndex)),
                    SchemaCatalog.defaultValue(of: replacement) != SchemaCatalog.defaultValue(of: property)
                else { continue }
                changed[UInt32(entityIndex), default: []].append((index, SchemaCatalog.defaultValue(of: property)))
            }
        }
        guard !changed.isEmpty else { return }
        for object in objects.keys {
            guard let properties = changed[object.entityIndex], var values = objects[object] else { continue }
            objects[object] = nil  // keep the row uniquely referenced while it is edited
            for (index, value) in properties {
                if index >= values.count { values += repeatElement(nil, count: index + 1 - values.count) }
                if values[index] == nil { values[index] = .value(value) }
            }
            objects[object] = values
        }
    }
}
