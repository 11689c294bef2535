import LogFormat

/// Runs the code of a custom ``MigrationStage`` over the records of the log, one at a time, on top of the stage's
/// inferred mapping.
///
/// The code sees an old object's complete values, but a record holds only what changed; so the mapper keeps the
/// old values of the live objects of the entities the code migrates (those entities only, never the whole graph)
/// and what it last wrote for them, and writes the difference: an insert the first time, then updates, and
/// deletes when the old object goes. Objects of other entities go through inference unchanged.
///
/// A class, so that the chain of steps mutates one state instead of copying it per record.
final class CustomStageMapper {
    private(set) var inference: RecordMapper
    let mapping: MigrationMapping
    /// Per old entity, the code that migrates its objects (`nil`: inference alone).
    let migrations: [EntityMigration?]
    /// What error messages call the stage ("Library version 2").
    let stageName: String
    /// The complete old values of each live object of a migrated entity, by key.
    private var oldValues: [UInt64: [PropertyValue]] = [:]
    /// What was last written for each object the code produced (migrated and created ones).
    private var written: [ObjectReference: [UInt32: PropertyValue]] = [:]
    /// The objects the code created beside each migrated object, by the migrated object's key.
    private var createdObjects: [UInt64: [ObjectReference]] = [:]
    /// For each object written whose code set relationships to objects it did not create, those relationships
    /// (their inverses, on the targets, are the mapper's to write).
    private var externalRelationships: [ObjectReference: [UInt32]] = [:]
    /// While a checkpoint is mapped: the inverses its migrated objects' relationships put on their targets, which
    /// the targets' own records (written by inference, before or after) lack; see ``takeCheckpointInverses()``.
    private var checkpointInverses: [ObjectReference: [UInt32: [ObjectReference]]] = [:]

    /// Keys of created objects start here, far above any key a store hands out, and are derived from the old
    /// object's key and the relationship's index, so every run of the code for one object finds the same object.
    static let createdKeyBase: UInt64 = 1 << 62
    /// Created objects per old object: one per relationship of the new entity.
    static let createdKeyStride: UInt64 = 1 << 12

    init(mapping: MigrationMapping, stage: MigrationStage) {
        inference = RecordMapper(mapping: mapping)
        self.mapping = mapping
        let byName = Dictionary(uniqueKeysWithValues: stage.entityMigrations.map { ($0.entityName, $0) })
        migrations = mapping.sourceSchema.entities.map { byName[$0.name] }
        stageName = "\(stage.targetModel.name) version \(stage.targetModel.versionIdentifier)"
    }

    func adopt(_ schema: SchemaPayload) throws(EventGraphError) {
        try inference.adopt(schema)
    }

    func map(_ changeset: Changeset) throws -> Changeset {
        var mapped = changeset
        mapped.operations = []
        mapped.operations.reserveCapacity(changeset.operations.count)
        // Inverse sides go last, after the inserts of the objects they change; not onto objects deleted here.
        var inverses: [ChangeOperation] = []
        for operation in changeset.operations {
            let object = operation.object
            guard migrations[Int(object.entityIndex)] != nil, object.storeIndex == 0 else {
                if let target = inference.map(operation) { mapped.operations.append(target) }
                continue
            }
            switch operation {
            case .insert(_, let changes):
                var values = inference.defaults(ofOldEntity: Int(object.entityIndex))
                for change in changes where Int(change.propertyIndex) < values.count {
                    values[Int(change.propertyIndex)] = change.value
                }
                oldValues[object.key] = values
            case .update(_, let changes):
                guard var values = oldValues[object.key] else { continue }
                for change in changes where Int(change.propertyIndex) < values.count {
                    values[Int(change.propertyIndex)] = change.value
                }
                oldValues[object.key] = values
            case .relate(_, let property, let added, let removed):
                guard var values = oldValues[object.key], Int(property) < values.count,
                    case .toMany(var targets) = values[Int(property)]
                else { continue }
                let gone = Set(removed)
                targets.removeAll { gone.contains($0) }
                targets += added
                values[Int(property)] = .toMany(targets)
                oldValues[object.key] = values
            case .delete:
                oldValues[object.key] = nil
                let created = createdObjects.removeValue(forKey: object.key) ?? []
                for reference in (inference.map(object).map { [$0] } ?? []) + created {
                    inverses += forget(reference)
                    mapped.operations.append(.delete(reference))
                }
                continue
            }
            guard let values = oldValues[object.key] else { continue }
            mapped.operations += try write(
                produce(object, values, transactionID: changeset.transactionID), for: object, inverses: &inverses)
        }
        if !inverses.isEmpty {
            var deleted: Set<ObjectReference> = []
            for case .delete(let reference) in mapped.operations { deleted.insert(reference) }
            // Removals first: an object that leaves a to-one inverse and one that takes it in the same transaction
            // leave it set to the second.
            let kept = inverses.filter { !deleted.contains($0.object) }
            mapped.operations += kept.filter(Self.isRemoval) + kept.filter { !Self.isRemoval($0) }
        }
        return mapped
    }

    func map(_ chunk: CheckpointChunk) throws -> CheckpointChunk {
        var mapped = CheckpointChunk(foreignStores: chunk.foreignStores, records: [])
        for record in chunk.records {
            let object = record.object
            guard migrations[Int(object.entityIndex)] != nil, object.storeIndex == 0 else {
                mapped.records += inference.map(CheckpointChunk(foreignStores: [], records: [record])).records
                continue
            }
            var values = inference.defaults(ofOldEntity: Int(object.entityIndex))
            for change in record.properties where Int(change.propertyIndex) < values.count {
                values[Int(change.propertyIndex)] = change.value
            }
            oldValues[object.key] = values
            let produced = try produce(object, values, transactionID: nil)
            // Remembered as a transaction's insert remembers them, so that a later delete deletes them too.
            let created = produced.map(\.reference).filter { $0.key != object.key }
            createdObjects[object.key] = created.isEmpty ? nil : created
            for produced in produced {
                written[produced.reference] = produced.properties
                externalRelationships[produced.reference] =
                    produced.externalRelationships.isEmpty ? nil : produced.externalRelationships
                for property in produced.externalRelationships {
                    for side in inverseSides(of: produced.reference, property, produced.properties) {
                        checkpointInverses[side.target, default: [:]][side.inverse, default: []].append(
                            produced.reference)
                    }
                }
                mapped.records.append(
                    ObjectRecord(object: produced.reference, properties: Self.changes(produced.properties)))
            }
        }
        return mapped
    }

    /// The inverse values the last checkpoint's migrated objects put on objects of other entities, as records that
    /// list only those relationships (under this stage's target model), and forgets them. Merged into the state
    /// read from the checkpoint: a to-many value adds its objects, a to-one value is set.
    func takeCheckpointInverses() -> [ObjectRecord] {
        defer { checkpointInverses = [:] }
        return checkpointInverses.sorted { $0.key < $1.key }.map { target, inverses in
            let entity = mapping.targetSchema.entities[Int(target.entityIndex)]
            let changes = inverses.sorted { $0.key < $1.key }.map { property, sources in
                guard case .relationship(let relationship) = entity.properties[Int(property)],
                    relationship.isToMany
                else { return PropertyChange(propertyIndex: property, value: .toOne(sources.last)) }
                return PropertyChange(propertyIndex: property, value: .toMany(sources))
            }
            return ObjectRecord(object: target, properties: changes)
        }
    }

    /// The operations that bring what was written for `object` (and the objects created beside it) to `produced`;
    /// the inverse sides of relationships the code set to other objects go to `inverses`.
    private func write(
        _ produced: [ProducedObject], for object: ObjectReference, inverses: inout [ChangeOperation]
    ) -> [ChangeOperation] {
        var operations: [ChangeOperation] = []
        var created: [ObjectReference] = []
        for item in produced {
            let reference = item.reference
            if reference.key != object.key { created.append(reference) }
            let previous = written[reference]
            let properties = item.properties
            let related = Set(item.externalRelationships).union(externalRelationships[reference] ?? [])
            for property in related.sorted() {
                inverses += inverseOperations(
                    of: reference, property, from: previous?[property], to: properties[property])
            }
            externalRelationships[reference] = item.externalRelationships.isEmpty ? nil : item.externalRelationships
            written[reference] = properties
            guard let previous else {
                operations.append(.insert(reference, Self.changes(properties)))
                continue
            }
            let changed = properties.filter { previous[$0.key] != $0.value }
            if !changed.isEmpty { operations.append(.update(reference, Self.changes(changed))) }
        }
        // An object the code created before but no longer does is deleted.
        for stale in (createdObjects[object.key] ?? []) where !created.contains(stale) {
            inverses += forget(stale)
            operations.append(.delete(stale))
        }
        createdObjects[object.key] = created.isEmpty ? nil : created
        return operations
    }

    /// Forgets what was written for `reference`, which is being deleted; returns the operations that take it out of
    /// the inverses of the relationships the code set on it.
    private func forget(_ reference: ObjectReference) -> [ChangeOperation] {
        let previous = written.removeValue(forKey: reference)
        var operations: [ChangeOperation] = []
        for property in externalRelationships.removeValue(forKey: reference) ?? [] {
            operations += inverseOperations(of: reference, property, from: previous?[property], to: nil)
        }
        return operations
    }

    /// The operations on the targets of relationship `property` of `source` when its value goes from `old` to
    /// `new`: the source leaves the inverse of the targets it lost and joins that of those it gained.
    private func inverseOperations(
        of source: ObjectReference, _ property: UInt32, from old: PropertyValue?, to new: PropertyValue?
    ) -> [ChangeOperation] {
        let before = inverseSides(of: source, property, [property: old ?? .toMany([])])
        let after = inverseSides(of: source, property, [property: new ?? .toMany([])])
        let kept = Set(before.map(\.target)).intersection(after.map(\.target))
        var operations: [ChangeOperation] = []
        for side in before where !kept.contains(side.target) {
            operations.append(
                side.isToMany
                    ? .relate(side.target, propertyIndex: side.inverse, added: [], removed: [source])
                    : .update(side.target, [PropertyChange(propertyIndex: side.inverse, value: .toOne(nil))]))
        }
        for side in after where !kept.contains(side.target) {
            operations.append(
                side.isToMany
                    ? .relate(side.target, propertyIndex: side.inverse, added: [source], removed: [])
                    : .update(side.target, [PropertyChange(propertyIndex: side.inverse, value: .toOne(source))]))
        }
        return operations
    }

    /// Whether an inverse operation takes a source out of an inverse (rather than putting it in).
    private static func isRemoval(_ operation: ChangeOperation) -> Bool {
        switch operation {
        case .relate(_, _, let added, _): added.isEmpty
        case .update(_, let changes): changes.allSatisfy { $0.value == .toOne(nil) }
        default: false
        }
    }

    private static func changes(_ properties: [UInt32: PropertyValue]) -> [PropertyChange] {
        properties.sorted { $0.key < $1.key }.map { PropertyChange(propertyIndex: $0.key, value: $0.value) }
    }
}
