import LogFormat

extension Replayer {
    /// The indexes a checkpoint's directory lists (format 1.4), by entity, as stored indexes read on first use.
    /// An index the model does not have in that shape (another constraint, property or arity) is left out: its
    /// entity's indexes are then built from the chunks, as for a 1.3 checkpoint.
    ///
    /// - Parameter schema: the schema frame in force at the checkpoint, which names the constraint each stored
    ///   uniqueness index was written for (the directory gives only its owner and ordinal).
    static func storedIndexes(
        of directory: CheckpointDirectory, source: CheckpointChunkSource, model: ObjectModel,
        writtenUnder schema: SchemaPayload?
    ) -> [Int: [CheckpointIndex]] {
        var result: [Int: [CheckpointIndex]] = [:]
        for listed in directory.indexes {
            let entityIndex = Int(listed.entityIndex)
            guard entityIndex < model.entities.count else { continue }
            let entity = model.entities[entityIndex]
            let constraint: UniqueConstraint?
            var storedOrder: [Int]?
            let propertyIndex: Int
            let name: String
            switch listed.kind {
            case .unique:
                guard let (found, order) = Self.constraint(coveredBy: listed, of: entity, writtenUnder: schema)
                else { continue }
                constraint = found
                storedOrder = order
                propertyIndex = found.propertyIndices[0]
                name = "the uniqueness index (\(found.propertyNames.joined(separator: ", "))) of entity \(entity.name)"
            case .attribute:
                guard entity.indexedPropertyIndices.contains(Int(listed.ordinal)) else { continue }
                constraint = nil
                propertyIndex = Int(listed.ordinal)
                name = "the index of attribute \(entity.properties[propertyIndex].name) of entity \(entity.name)"
            }
            let chunks = listed.chunks.enumerated().map { chunkIndex, entry in
                LazyIndexChunk(
                    entry: entry, chunkIndex: chunkIndex, arity: Int(listed.arity), indexName: name, source: source)
            }
            var index = CheckpointIndex(
                kind: listed.kind, entityIndex: entityIndex, constraint: constraint, propertyIndex: propertyIndex,
                arity: Int(listed.arity), name: name, chunks: chunks)
            index.storedOrder = storedOrder
            result[entityIndex, default: []].append(index)
        }
        return result
    }

    /// The model's constraint a stored uniqueness index covers, and the order its entries' values are in: the
    /// constraint of the same owner whose attributes are those of the constraint the index was written for, whatever
    /// its ordinal now and in whatever order. The ordinal alone is not enough: the constraints of an entity are a
    /// set in the model's shape, so a model that declares them in another order, or a compound constraint's
    /// attributes in another order, opens the store without a migration, and its constraint at that ordinal is
    /// another one (a stale index then misses duplicates and refuses tuples that are free). A compound constraint
    /// whose attributes come in another order is the same constraint: the index is read with each lookup's tuple
    /// put in the index's order (``CheckpointIndex/storedOrder``; `nil` when the orders agree).
    static func constraint(
        coveredBy listed: IndexChunks, of entity: EntityDescription, writtenUnder schema: SchemaPayload?
    ) -> (UniqueConstraint, storedOrder: [Int]?)? {
        let owner = Int(listed.ownerEntityIndex)
        let ordinal = Int(listed.ordinal)
        guard let schema, owner < schema.entities.count,
            ordinal < schema.entities[owner].uniquenessConstraints.count
        else { return nil }
        let names = schema.entities[owner].uniquenessConstraints[ordinal]
        guard names.count == Int(listed.arity), Set(names).count == names.count else { return nil }
        if let same = entity.uniqueConstraints.first(where: { $0.entityIndex == owner && $0.propertyNames == names }) {
            return (same, nil)
        }
        for constraint in entity.uniqueConstraints
        where constraint.entityIndex == owner && Set(constraint.propertyNames) == Set(names) {
            let order = names.compactMap { constraint.propertyNames.firstIndex(of: $0) }
            return (constraint, order)
        }
        return nil
    }
}
