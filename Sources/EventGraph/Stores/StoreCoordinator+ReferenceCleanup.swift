import LogFormat

extension StoreCoordinator {
    /// Removes references between the mounted stores whose targets no longer exist, in one commit, and reports them.
    ///
    /// A delete removes the object from its inverses in every mounted store; an inverse in a store that was not
    /// mounted keeps the reference, and this is where it goes once both stores are mounted. References into
    /// stores still unmounted are left alone (they cannot be checked), and so are references within one store
    /// (a store keeps its own inverses).
    ///
    /// - Throws: the error of a checkpoint chunk that cannot be read (a source row, or the target of a reference
    ///   into another store), before anything is committed; the error of the commit.
    func cleanUpBrokenReferences() throws(EventGraphError) -> ReferenceCleanupReport {
        guard stores.count > 1, !isReadOnly else { return ReferenceCleanupReport(cleanedReferences: []) }
        var operations: [ChangeOperation] = []
        var cleaned: [ReferenceCleanupReport.CleanedReference] = []
        for entity in model.entities where hasRelationships(ofEntity: entity.index) {
            let relationshipIndices = entity.properties.compactMap { $0.relationship?.index }
            for batch in rows(of: entity.index, keepingChunks: false) {
                for case let row? in try batch.rows() {
                    let source = ObjectReference(row.identity(inStore: batch.storeIndex), entityIndex: entity.index)
                    for index in relationshipIndices {
                        var broken: [ObjectReference] = []
                        for target in row.values[index].references {
                            if try isBroken(target, referredFromStoreAt: batch.storeIndex) { broken.append(target) }
                        }
                        guard !broken.isEmpty else { continue }
                        operations.append(removal(of: broken, at: index, from: source, value: row.values[index]))
                        cleaned += broken.map { target in
                            ReferenceCleanupReport.CleanedReference(
                                source: objectID(of: source.identity, entityName: entity.name),
                                relationshipName: entity.properties[index].name,
                                target: objectID(
                                    of: target.identity, entityName: model.entities[Int(target.entityIndex)].name))
                        }
                    }
                }
            }
        }
        guard !operations.isEmpty else { return ReferenceCleanupReport(cleanedReferences: []) }
        let request = CommitRequest(
            author: ReferenceCleanupReport.author, operations: operations, readRows: [:], mergePolicy: .error)
        _ = try commit(request)
        return ReferenceCleanupReport(cleanedReferences: cleaned)
    }

    /// Whether a reference from the store at `storeIndex` points into another mounted store at nothing.
    ///
    /// - Throws: the error of the target store's checkpoint chunk that may hold the target and cannot be read.
    private func isBroken(_ target: ObjectReference, referredFromStoreAt storeIndex: UInt32) throws(EventGraphError)
        -> Bool
    {
        guard target.storeIndex != storeIndex, Int(target.storeIndex) < stores.count else { return false }
        return try lookUpCommittedRow(of: target.identity, entityIndex: Int(target.entityIndex)) == nil
    }

    /// The operation that removes `broken` from a relationship value.
    private func removal(
        of broken: [ObjectReference], at index: Int, from source: ObjectReference, value: PropertyValue
    ) -> ChangeOperation {
        if case .toMany = value {
            return .relate(source, propertyIndex: UInt32(index), added: [], removed: broken)
        }
        return .update(source, [PropertyChange(propertyIndex: UInt32(index), value: .toOne(nil))])
    }
}
