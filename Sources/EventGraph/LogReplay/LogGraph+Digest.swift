public import LogFormat

extension LogGraph {
    /// The canonical digest of the live state (see ``StateDigest``).
    public func digest() -> StateDigest {
        var hasher = DigestHasher()
        let catalog = self.catalog
        func entityName(_ index: UInt32) -> String { catalog?.entityName(index) ?? "#\(index)" }
        func combine(_ reference: ObjectReference, into hasher: inout DigestHasher) {
            let store = storeUUID(of: reference) ?? .zero
            hasher.combine(integer: store.high)
            hasher.combine(integer: store.low)
            hasher.combine(string: entityName(reference.entityIndex))
            hasher.combine(integer: reference.key)
        }
        let ordered = objects.keys.sorted { a, b in
            let (na, nb) = (entityName(a.entityIndex), entityName(b.entityIndex))
            if na != nb { return na < nb }
            if a.key != b.key { return a.key < b.key }
            return (storeUUID(of: a) ?? .zero) < (storeUUID(of: b) ?? .zero)
        }
        hasher.combine(integer: UInt64(ordered.count))
        for object in ordered {
            combine(object, into: &hasher)
            let entity = catalog?.entity(at: object.entityIndex)
            let properties: [(String, Int, PropertySchema?)] =
                entity.map { $0.properties.enumerated().map { ($1.name, $0, $1) } }
                ?? objects[object]!.indices.map { ("#\($0)", $0, nil) }
            for (name, index, schema) in properties.sorted(by: { $0.0 < $1.0 }) {
                if let schema, !SchemaCatalog.isPersistent(schema) { continue }
                let values = objects[object]!
                let recorded = index < values.count ? values[index] : nil
                if case .targets(let set)? = recorded {
                    hasher.combine(string: name)
                    hasher.combine(byte: 0xA2)
                    hasher.combine(integer: UInt64(set.count))
                    for target in sortedCanonically(Array(set), entityName) { combine(target, into: &hasher) }
                    continue
                }
                guard let value = recorded?.propertyValue ?? schema.map(SchemaCatalog.defaultValue(of:)) else {
                    continue
                }
                hasher.combine(string: name)
                switch value {
                case .attribute(let attribute):
                    hasher.combine(byte: 0xA0)
                    hasher.combine(attribute)
                case .toOne(let target):
                    hasher.combine(byte: 0xA1)
                    if let target { combine(target, into: &hasher) } else { hasher.combine(byte: 0) }
                case .toMany(let targets):
                    hasher.combine(byte: 0xA2)
                    var isOrdered = false
                    if case .relationship(let relationship)? = schema { isOrdered = relationship.isOrdered }
                    let list = isOrdered ? targets : sortedCanonically(targets, entityName)
                    hasher.combine(integer: UInt64(list.count))
                    for target in list { combine(target, into: &hasher) }
                }
            }
        }
        return StateDigest(value: hasher.state)
    }

    /// Targets in (store UUID, entity name, key) order: independent of store and entity indices.
    private func sortedCanonically(_ targets: [ObjectReference], _ entityName: (UInt32) -> String) -> [ObjectReference] {
        targets.sorted { a, b in
            let (sa, sb) = (storeUUID(of: a) ?? .zero, storeUUID(of: b) ?? .zero)
            if sa != sb { return sa < sb }
            if a.entityIndex != b.entityIndex { return entityName(a.entityIndex) < entityName(b.entityIndex) }
            return a.key < b.key
        }
    }
}
