import LogFormat

extension StoreState {
    /// Stages a changeset of new objects in one pass that also proves the pass is all it needs: every operation
    /// inserts an object of this store that does not exist yet, every relationship target in this store is one of
    /// the inserted objects (conflict resolution has nothing to decide, see ``Store/isSelfContainedInsertion(_:)``),
    /// and, when `checksInverses`, both sides of every edge are written (inverse repair adds nothing, see
    /// ``InverseRepair/isConsistentInsertion(_:model:)``).
    ///
    /// A bulk save walked its 100,000 inserts four times before its rows were staged (the self-containment check,
    /// the inverse check, staging, with the ownership check before them), each walk missing the cache on every
    /// insert's values; this walks them once, and keeps the inserted keys in a bitmap instead of a set.
    ///
    /// Returns `nil`, having staged nothing that anyone sees, for any other changeset, and for one that staging
    /// would refuse (a key inserted twice or already used, an unknown entity or property): the caller then takes
    /// the general path, which resolves, repairs and stages it, and refuses it with its usual error. The rows
    /// returned are those ``stage(_:model:overlay:insertDefaults:)`` returns for the same operations.
    ///
    /// - Parameter overlay: the saves queued before this one and not yet installed.
    func stageInsertion(
        _ operations: [ChangeOperation], model: ObjectModel, version: UInt64, overlay: CommitQueue,
        checksInverses: Bool
    ) -> StagedChanges? {
        // First, only the references (not the values): the inserted keys, which the targets are checked against.
        guard let inserted = InsertedKeys(insertsOf: operations) else { return nil }
        func isInserted(_ target: ObjectReference) -> Bool {
            target.storeIndex != Store.ownStoreIndex || inserted.contains(target.key)
        }

        var staged = StagedChanges()
        staged.reserveCapacity(operations.count)
        // The unique tuples are taken here, where each row's values are in the cache: the uniqueness check that
        // read them from the rows afterwards missed the cache on every one (a sixth of a bulk insert's commit).
        var newTuples: [StagedChanges.NewTuple] = []
        if model.entities.contains(where: { !$0.uniqueConstraints.isEmpty }) {
            newTuples.reserveCapacity(operations.count)
        }
        var votes = InverseRepair.InsertionVotes()
        // `operations` is alive and unchanged for the pass: its elements are read in place by the prefetches.
        let elements = SavePrefetch.elements(of: operations)
        for position in operations.indices {
            // Asked for a few inserts ahead: each one's values and to-many lists, cold in a bulk save (see
            // `SavePrefetch`); the strings' bytes are not read here.
            SavePrefetch.prefetchAhead(in: elements, from: position, lists: true, strings: false)
            guard case .insert(let reference, let changes) = operations[position] else { continue }
            let entityIndex = Int(reference.entityIndex)
            guard entityIndex < tables.count, entityIndex < model.entities.count, staged[reference.key] == nil,
                overlay.row(entityIndex: entityIndex, key: reference.key, in: self) == nil
            else { return nil }
            if checksInverses {
                guard votes.record(reference, changes, model: model) else { return nil }
            }
            let entity = model.entities[entityIndex]
            let defaults = entity.defaultValues
            // By position: each value is checked where it is, and neither copied nor retained (the row reads it
            // from the changes, see ``InsertedValues``).
            for position in changes.indices {
                guard Int(changes[position].propertyIndex) < defaults.count else { return nil }
                switch changes[position].value {
                case .attribute, .toOne(nil): continue
                case .toOne(let target?): guard isInserted(target) else { return nil }
                case .toMany(let targets): guard targets.allSatisfy(isInserted) else { return nil }
                }
            }
            let row = Row(
                entityIndex: entityIndex, key: reference.key, version: version, changes: changes, defaults: defaults)
            // Appended (the key was not staged, checked above): its position is the last.
            staged.put(key: reference.key, entityIndex: entityIndex, row: row)
            for (ordinal, constraint) in entity.uniqueConstraints.enumerated() {
                guard let tuple = UniqueKey(constraint, values: row.values) else { continue }
                newTuples.append(.init(tuple: tuple, position: staged.count - 1, ordinal: ordinal))
            }
        }
        guard !checksInverses || votes.areConsistent() else { return nil }
        staged.newTuples = newTuples
        return staged
    }
}
