import LogFormat

extension LogGraph {
    /// The canonical digest of the live state (see ``StateDigest``).
    package func digest() -> StateDigest {
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
        // Entities in name order, compared by rank: sorting a million objects must not compare strings.
        let names = (0..<(catalog?.schema.entities.count ?? 0)).map { entityName(UInt32($0)) }
        let ranks = names.indices.sorted { names[$0] < names[$1] }.enumerated()
            .reduce(into: [Int](repeating: 0, count: names.count)) { $0[$1.element] = $1.offset }
        func rank(_ index: UInt32) -> Int { Int(index) < ranks.count ? ranks[Int(index)] : Int(index) }
        let ordered = objects.keys.sorted { a, b in
            let (ra, rb) = (rank(a.entityIndex), rank(b.entityIndex))
            if ra != rb { return ra < rb }
            if a.key != b.key { return a.key < b.key }
            return (storeUUID(of: a) ?? .zero) < (storeUUID(of: b) ?? .zero)
        }
        hasher.combine(integer: UInt64(ordered.count))
        // Per entity, once: its persistent properties in name order, with their defaults and orderedness.
        struct PropertyPlan {
            var name: String
            var index: Int
            var defaultValue: PropertyValue?
            var isOrdered: Bool
        }
        let plans: [[PropertyPlan]] = (catalog?.schema.entities ?? []).map { entity in
            entity.properties.enumerated().compactMap { index, property -> PropertyPlan? in
                guard SchemaCatalog.isPersistent(property) else { return nil }
                var isOrdered = false
                if case .relationship(let relationship) = property { isOrdered = relationship.isOrdered }
                return PropertyPlan(
                    name: property.name, index: index, defaultValue: SchemaCatalog.defaultValue(of: property),
                    isOrdered: isOrdered)
            }.sorted { $0.name < $1.name }
        }
        for object in ordered {
            combine(object, into: &hasher)
            let values = objects[object]!
            let plan =
                Int(object.entityIndex) < plans.count
                ? plans[Int(object.entityIndex)]
                : values.indices.map { PropertyPlan(name: "#\($0)", index: $0, defaultValue: nil, isOrdered: false) }
                    .sorted { $0.name < $1.name }
            for property in plan {
                let recorded = property.index < values.count ? values[property.index] : nil
                if case .targets(let set)? = recorded {
                    hasher.combine(string: property.name)
                    hasher.combine(byte: 0xA2)
                    hasher.combine(integer: UInt64(set.count))
                    for target in sortedCanonically(Array(set), entityName) { combine(target, into: &hasher) }
                    continue
                }
                let value: PropertyValue
                if case .value(let recordedValue)? = recorded {
                    value = recordedValue
                } else if let defaultValue = property.defaultValue {
                    value = defaultValue
                } else {
                    continue
                }
                hasher.combine(string: property.name)
                switch value {
                case .attribute(let attribute):
                    hasher.combine(byte: 0xA0)
                    hasher.combine(attribute)
                case .toOne(let target):
                    hasher.combine(byte: 0xA1)
                    if let target { combine(target, into: &hasher) } else { hasher.combine(byte: 0) }
                case .toMany(let targets):
                    hasher.combine(byte: 0xA2)
                    let list = property.isOrdered ? targets : sortedCanonically(targets, entityName)
                    hasher.combine(integer: UInt64(list.count))
                    for target in list { combine(target, into: &hasher) }
                }
            }
        }
        return StateDigest(value: hasher.state)
    }

    /// Targets in (store UUID, entity name, key) order: independent of store and entity indices.
    private func sortedCanonically(_ targets: [ObjectReference], _ entityName: (UInt32) -> String) -> [ObjectReference]
    {
        targets.sorted { a, b in
            let (sa, sb) = (storeUUID(of: a) ?? .zero, storeUUID(of: b) ?? .zero)
            if sa != sb { return sa < sb }
            if a.entityIndex != b.entityIndex { return entityName(a.entityIndex) < entityName(b.entityIndex) }
            return a.key < b.key
        }
    }
}
