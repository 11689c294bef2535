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
                if let target = inference.map(object) {
                    written[target] = nil
                    mapped.operations.append(.delete(target))
                }
                for created in createdObjects.removeValue(forKey: object.key) ?? [] {
                    written[created] = nil
                    mapped.operations.append(.delete(created))
                }
                continue
            }
            guard let values = oldValues[object.key] else { continue }
            mapped.operations += try write(produce(object, values, transactionID: changeset.transactionID), for: object)
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
            for (reference, properties) in try produce(object, values, transactionID: nil) {
                written[reference] = properties
                mapped.records.append(ObjectRecord(object: reference, properties: Self.changes(properties)))
            }
        }
        return mapped
    }

    /// The operations that bring what was written for `object` (and the objects created beside it) to `produced`.
    private func write(_ produced: [(ObjectReference, [UInt32: PropertyValue])], for object: ObjectReference)
        -> [ChangeOperation]
    {
        var operations: [ChangeOperation] = []
        var created: [ObjectReference] = []
        for (reference, properties) in produced {
            if reference.key != object.key { created.append(reference) }
            guard let previous = written[reference] else {
                operations.append(.insert(reference, Self.changes(properties)))
                written[reference] = properties
                continue
            }
            let changed = properties.filter { previous[$0.key] != $0.value }
            if !changed.isEmpty { operations.append(.update(reference, Self.changes(changed))) }
            written[reference] = properties
        }
        // An object the code created before but no longer does is deleted.
        for stale in (createdObjects[object.key] ?? []) where !created.contains(stale) {
            written[stale] = nil
            operations.append(.delete(stale))
        }
        createdObjects[object.key] = created.isEmpty ? nil : created
        return operations
    }

    private static func changes(_ properties: [UInt32: PropertyValue]) -> [PropertyChange] {
        properties.sorted { $0.key < $1.key }.map { PropertyChange(propertyIndex: $0.key, value: $0.value) }
    }
}
