import LogFormat

/// Maps the records of an old log, one at a time, through a ``MigrationMapping``.
///
/// A record that leaves a property out means the default of the schema frame in force when it was written; in
/// the new log it would mean the new model's default. Where the two differ, inserts and checkpoint records get
/// the old default written out, so every object keeps its values.
struct RecordMapper {
    let mapping: MigrationMapping
    /// Per old entity, each property's default in the schema frame in force.
    private var sourceDefaults: [[PropertyValue]]

    init(mapping: MigrationMapping) {
        self.mapping = mapping
        sourceDefaults = mapping.sourceSchema.entities.map { $0.properties.map(SchemaCatalog.defaultValue(of:)) }
    }

    /// Takes a later schema frame of the old log (same shape, other defaults).
    mutating func adopt(_ schema: SchemaPayload) throws(EventGraphError) {
        guard ModelShape.hash(of: schema.entities) == ModelShape.hash(of: mapping.sourceSchema.entities) else {
            throw EventGraphError(
                .modelMismatch, "the old log changes its model's shape mid-way; it cannot be migrated")
        }
        sourceDefaults = schema.entities.map { $0.properties.map(SchemaCatalog.defaultValue(of:)) }
    }

    func map(_ changeset: Changeset) -> Changeset {
        var mapped = changeset
        mapped.operations = []
        mapped.operations.reserveCapacity(changeset.operations.count)
        for operation in changeset.operations {
            if let target = map(operation) { mapped.operations.append(target) }
        }
        return mapped
    }

    /// One operation under the new model, or `nil` when nothing of it remains.
    func map(_ operation: ChangeOperation) -> ChangeOperation? {
        switch operation {
        case .insert(let object, let changes):
            return map(object).map { .insert($0, record(object, changes)) }
        case .update(let object, let changes):
            guard let target = map(object) else { return nil }
            let properties = map(changes, of: object)
            return properties.isEmpty ? nil : .update(target, properties)
        case .relate(let object, let property, let added, let removed):
            guard let target = map(object),
                let destination = mapping.propertyTargets[Int(object.entityIndex)][Int(property)]
            else { return nil }
            return .relate(
                target, propertyIndex: destination.index, added: added.compactMap(map),
                removed: removed.compactMap(map))
        case .delete(let object):
            return map(object).map { .delete($0) }
        }
    }

    /// The values every property of an old entity has when an object does not record one (the defaults of the
    /// schema frame in force).
    func defaults(ofOldEntity entity: Int) -> [PropertyValue] { sourceDefaults[entity] }

    func map(_ chunk: CheckpointChunk) -> CheckpointChunk {
        var mapped = CheckpointChunk(foreignStores: chunk.foreignStores, records: [])
        mapped.records.reserveCapacity(chunk.records.count)
        for record in chunk.records {
            guard let target = map(record.object) else { continue }
            mapped.records.append(
                ObjectRecord(object: target, properties: self.record(record.object, record.properties)))
        }
        return mapped
    }

    /// The values of a new object: those recorded, plus every old default the new model would read differently.
    private func record(_ object: ObjectReference, _ changes: [PropertyChange]) -> [PropertyChange] {
        let entity = Int(object.entityIndex)
        var properties = map(changes, of: object)
        guard let newEntity = mapping.entityTargets[entity] else { return properties }
        let listed = Set(changes.map(\.propertyIndex))
        for (position, target) in mapping.propertyTargets[entity].enumerated() {
            guard let target, !listed.contains(UInt32(position)) else { continue }
            let value = convert(sourceDefaults[entity][position], target)
            if value != mapping.targetDefaults[Int(newEntity)][Int(target.index)] {
                properties.append(PropertyChange(propertyIndex: target.index, value: value))
            }
        }
        return properties
    }

    func map(_ changes: [PropertyChange], of object: ObjectReference) -> [PropertyChange] {
        let targets = mapping.propertyTargets[Int(object.entityIndex)]
        var mapped: [PropertyChange] = []
        mapped.reserveCapacity(changes.count)
        for change in changes {
            guard Int(change.propertyIndex) < targets.count, let target = targets[Int(change.propertyIndex)] else {
                continue
            }
            mapped.append(PropertyChange(propertyIndex: target.index, value: convert(change.value, target)))
        }
        return mapped
    }

    private func convert(_ value: PropertyValue, _ target: MigrationMapping.PropertyTarget) -> PropertyValue {
        switch value {
        case .attribute(let attribute):
            if attribute == .null, let replacement = target.nullReplacement { return .attribute(replacement) }
            guard let type = target.widenedType else { return value }
            return .attribute(Self.widen(attribute, to: type))
        case .toOne(let reference):
            let mapped = reference.flatMap(map)
            return target.becomesToMany ? .toMany(mapped.map { [$0] } ?? []) : .toOne(mapped)
        case .toMany(let references):
            return .toMany(references.compactMap(map))
        }
    }

    private static func widen(_ value: AttributeValue, to type: AttributeType) -> AttributeValue {
        switch (value, type) {
        case (.int16(let x), .int32): .int32(Int32(x))
        case (.int16(let x), .int64): .int64(Int64(x))
        case (.int32(let x), .int64): .int64(Int64(x))
        case (.float(let x), .double): .double(Double(x))
        default: value
        }
    }

    /// The reference under the new model, or `nil` when its entity was removed. Entity indices always name the
    /// entities of the log's own schema, also in references to another store.
    func map(_ reference: ObjectReference) -> ObjectReference? {
        guard Int(reference.entityIndex) < mapping.entityTargets.count,
            let entity = mapping.entityTargets[Int(reference.entityIndex)]
        else { return nil }
        var mapped = reference
        mapped.entityIndex = entity
        return mapped
    }
}

extension RecordMapper {
    /// The mappers of a plan's consecutive versions, applied one after another in one pass over the log: each step
    /// reads the records the previous one wrote, against the defaults of its own source version.
    struct Chain {
        /// An inferred step, or a custom stage's (which runs its code over inference; a class, so that its state is
        /// never copied).
        enum Step {
            case inferred(RecordMapper)
            case custom(CustomStageMapper)
        }
        private var steps: [Step]

        init(_ steps: [Step]) {
            precondition(!steps.isEmpty, "a migration has at least one step")
            self.steps = steps
        }

        init(_ mappings: [MigrationMapping]) { self.init(mappings.map { .inferred(RecordMapper(mapping: $0)) }) }

        /// A later schema frame of the old log concerns the first step only.
        mutating func adopt(_ schema: SchemaPayload) throws(EventGraphError) {
            switch steps[0] {
            case .inferred(var mapper):
                try mapper.adopt(schema)
                steps[0] = .inferred(mapper)
            case .custom(let mapper):
                try mapper.adopt(schema)
            }
        }

        func map(_ changeset: Changeset) throws -> Changeset {
            try steps.reduce(changeset) { mapped, step in
                switch step {
                case .inferred(let mapper): mapper.map(mapped)
                case .custom(let mapper): try mapper.map(mapped)
                }
            }
        }

        func map(_ chunk: CheckpointChunk) throws -> CheckpointChunk {
            try steps.reduce(chunk) { mapped, step in
                switch step {
                case .inferred(let mapper): mapper.map(mapped)
                case .custom(let mapper): try mapper.map(mapped)
                }
            }
        }

        /// The inverse values the custom stages put on objects of the checkpoint just mapped, as records under the
        /// last model that list only those relationships (see ``CustomStageMapper/takeCheckpointInverses()``).
        func takeCheckpointInverses() -> [ObjectRecord] {
            var records: [ObjectRecord] = []
            for (position, step) in steps.enumerated() {
                guard case .custom(let mapper) = step else { continue }
                // Through the later steps' inference only: these are partial records, so no defaults are added.
                records += steps[(position + 1)...].reduce(mapper.takeCheckpointInverses()) { partial, later in
                    let inference =
                        switch later {
                        case .inferred(let mapper): mapper
                        case .custom(let mapper): mapper.inference
                        }
                    return partial.compactMap { record in
                        inference.map(record.object).map {
                            ObjectRecord(object: $0, properties: inference.map(record.properties, of: record.object))
                        }
                    }
                }
            }
            return records
        }
    }
}
