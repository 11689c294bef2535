import LogFormat

extension Replayer {
    /// The indexes a checkpoint's directory lists (format 1.4), by entity, as stored indexes read on first use.
    /// An index the model does not have in that shape (another constraint, property or arity) is left out: its
    /// entity's indexes are then built from the chunks, as for a 1.3 checkpoint.
    static func storedIndexes(of directory: CheckpointDirectory, source: CheckpointChunkSource, model: ObjectModel)
        -> [Int: [CheckpointIndex]]
    {
        var result: [Int: [CheckpointIndex]] = [:]
        for listed in directory.indexes {
            let entityIndex = Int(listed.entityIndex)
            guard entityIndex < model.entities.count else { continue }
            let entity = model.entities[entityIndex]
            let constraint: UniqueConstraint?
            let propertyIndex: Int
            let name: String
            switch listed.kind {
            case .unique:
                guard
                    let found = entity.uniqueConstraints.first(where: {
                        $0.entityIndex == Int(listed.ownerEntityIndex) && $0.ordinal == Int(listed.ordinal)
                    }), found.propertyIndices.count == Int(listed.arity)
                else { continue }
                constraint = found
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
            result[entityIndex, default: []].append(
                CheckpointIndex(
                    kind: listed.kind, entityIndex: entityIndex, constraint: constraint, propertyIndex: propertyIndex,
                    arity: Int(listed.arity), name: name, chunks: chunks))
        }
        return result
    }
}
