import LogFormat

/// Inference of the metadata that names properties: uniqueness constraints and indexes.
extension MigrationInference {
    mutating func recordConstraintChanges(of old: EntitySchema, new: EntityDescription) {
        // Constraints and indexes name properties: compare them under the new names.
        let renamed = Dictionary(
            new.properties.compactMap { property -> (String, String)? in
                let original = property.attribute?.originalName ?? property.relationship?.originalName
                return original.map { ($0, property.name) }
            }, uniquingKeysWith: { first, _ in first })
        func canonical(_ lists: [[String]]) -> Set<[String]> {
            Set(lists.map { $0.map { renamed[$0] ?? $0 }.sorted() })
        }
        let before = canonical(old.uniquenessConstraints)
        let after = canonical(new.uniquenessConstraints)
        for names in after.subtracting(before).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            changes.append(
                MigrationChange(
                    kind: .uniquenessConstraintAdded, entityName: new.name, propertyName: names.joined(separator: ","),
                    detail: "unique now (existing duplicates refuse the migration)"))
        }
        for names in before.subtracting(after).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            changes.append(
                MigrationChange(
                    kind: .uniquenessConstraintRemoved, entityName: new.name,
                    propertyName: names.joined(separator: ","), detail: "no longer unique"))
        }
        if canonical(old.indexes) != canonical(new.indexes) {
            changes.append(
                MigrationChange(
                    kind: .indexesChanged, entityName: new.name, propertyName: nil,
                    detail: "indexes \(new.indexes.map { $0.joined(separator: ",") })"))
        }
    }
}
