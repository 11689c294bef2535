import LogFormat

/// `egctl verify`'s check of a checkpoint's stored indexes (format 1.4, `Docs/FileFormat-Checkpoints.md` §7): each
/// index the directory lists is read chunk by chunk (frame, bounds, entry count) and compared with the entries the
/// engine's one index writer computes from the checkpoint's objects. One engine: the writer and the check share
/// ``StoreState/checkpointIndexChunks(model:entities:)``.
extension LogGraph {
    /// The differences between the stored indexes `directory` lists and the checkpoint's objects (the state as the
    /// checkpoint ends), one sentence each naming the file, the index, and the chunk and byte offset where it can.
    func storedIndexIssues(of directory: CheckpointDirectory) -> [String] {
        guard let state, let model else { return [] }
        let source = replayer.source
        let reader: LogReader
        do { reader = try LogReader(path: source) } catch {
            return ["\(source): the stored indexes cannot be read: \(error.message)"]
        }
        let entities = Set(directory.entities.map { Int($0.entityIndex) }.filter { $0 < model.entities.count })
        let expected = state.checkpointIndexChunks(model: model, entities: entities)
        var issues: [String] = []
        for listed in directory.indexes {
            let name = Self.describe(listed, model: model)
            // An index the model does not have in this shape is ignored by readers (they build it from the chunks).
            guard
                let computed = expected.first(where: {
                    $0.0.kind == listed.kind && $0.0.entityIndex == listed.entityIndex
                        && $0.0.ownerEntityIndex == listed.ownerEntityIndex && $0.0.ordinal == listed.ordinal
                })
            else { continue }
            var stored: [CheckpointIndexEntry] = []
            var isReadable = true
            for (chunkIndex, chunk) in listed.chunks.enumerated() {
                do {
                    stored += try reader.readIndexChunk(
                        chunk, arity: Int(listed.arity), checkpointTransactionID: state.lastTransactionID
                    ).entries
                } catch {
                    issues.append("\(source): chunk \(chunkIndex) of \(name): \(error.message)")
                    isReadable = false
                    break
                }
            }
            guard isReadable else { continue }
            let wanted = computed.1.flatMap(\.entries)
            guard stored != wanted else { continue }
            let position =
                zip(stored, wanted).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(stored.count, wanted.count)
            issues.append(
                "\(source): \(name) holds \(stored.count) entries, the checkpoint's objects give \(wanted.count); "
                    + "they first differ at entry \(position)")
        }
        return issues
    }

    private static func describe(_ index: IndexChunks, model: ObjectModel) -> String {
        guard Int(index.entityIndex) < model.entities.count else { return "an index of entity #\(index.entityIndex)" }
        let entity = model.entities[Int(index.entityIndex)]
        switch index.kind {
        case .unique: return "the stored uniqueness index #\(index.ordinal) of entity \(entity.name)"
        case .attribute:
            let property =
                Int(index.ordinal) < entity.properties.count
                ? entity.properties[Int(index.ordinal)].name : "#\(index.ordinal)"
            return "the stored index of attribute \(property) of entity \(entity.name)"
        }
    }
}
