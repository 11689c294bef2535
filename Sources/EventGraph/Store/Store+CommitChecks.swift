import LogFormat

/// The checks and rewrites a commit makes under the commit lock before it queues a changeset (see `Store.prepare`):
/// upserts resolved against the committed state, large binaries moved to blobs, uniqueness checked.
extension Store {
    // MARK: - Upserts

    /// Turns inserts whose unique values already exist in the store into updates of the existing objects.
    ///
    /// - Throws: the error of a checkpoint chunk that a holder lookup cannot load.
    func resolveUpserts(
        _ operations: inout [ChangeOperation], _ upserts: [ObjectIdentity: Int], _ queue: CommitQueue
    ) throws(EventGraphError) -> [ObjectIdentity: ObjectIdentity] {
        guard !upserts.isEmpty else { return [:] }
        var merged: [ObjectIdentity: ObjectReference] = [:]
        for operation in operations {
            guard case .insert(let reference, let changes) = operation, let ordinal = upserts[reference.identity] else {
                continue
            }
            let entity = model.entities[Int(reference.entityIndex)]
            var values = entity.defaultValues
            for change in changes { values[Int(change.propertyIndex)] = change.value }
            guard let tuple = UniqueKey(entity.uniqueConstraints[ordinal], values: values) else { continue }
            let family = model.entities[tuple.entityIndex].familyIndices
            let found = try state.withLock { state throws(EventGraphError) -> Row? in
                guard let existingKey = try queue.holder(of: tuple, in: state) else { return nil }
                return queue.row(forKey: existingKey, in: family, state: state)
            }
            guard let existing = found else { continue }
            merged[reference.identity] = existing.reference
        }
        guard !merged.isEmpty else { return [:] }
        func map(_ reference: ObjectReference) -> ObjectReference { merged[reference.identity] ?? reference }
        func map(_ value: PropertyValue) -> PropertyValue {
            switch value {
            case .attribute: value
            case .toOne(let reference): .toOne(reference.map(map))
            case .toMany(let references): .toMany(references.map(map))
            }
        }
        func map(_ changes: [PropertyChange]) -> [PropertyChange] {
            changes.map { PropertyChange(propertyIndex: $0.propertyIndex, value: map($0.value)) }
        }
        var rewritten: [ChangeOperation] = []
        for operation in operations {
            switch operation {
            case .insert(let reference, let changes):
                guard let target = merged[reference.identity] else {
                    rewritten.append(.insert(reference, map(changes)))
                    continue
                }
                // The new object's values overwrite the existing object's; its to-many targets are added.
                var scalar: [PropertyChange] = []
                for change in map(changes) {
                    if case .toMany(let targets) = change.value {
                        rewritten.append(
                            .relate(target, propertyIndex: change.propertyIndex, added: targets, removed: []))
                    } else {
                        scalar.append(change)
                    }
                }
                rewritten.append(.update(target, scalar))
            case .update(let reference, let changes):
                rewritten.append(.update(map(reference), map(changes)))
            case .relate(let reference, let propertyIndex, let added, let removed):
                rewritten.append(
                    .relate(
                        map(reference), propertyIndex: propertyIndex, added: added.map(map), removed: removed.map(map)))
            case .delete(let reference):
                rewritten.append(.delete(map(reference)))
            }
        }
        operations = rewritten
        return merged.mapValues(\.identity)
    }

    // MARK: - External storage

    /// Replaces binary values at or above their attribute's threshold by blob references.
    func externalize(_ operations: inout [ChangeOperation], transactionID: UInt64, blobs: inout [[UInt8]]) {
        func convert(_ reference: ObjectReference, _ changes: [PropertyChange]) -> [PropertyChange] {
            let entity = model.entities[Int(reference.entityIndex)]
            return changes.map { change in
                guard let attribute = entity.properties[Int(change.propertyIndex)].attribute,
                    let threshold = attribute.externalStorageThreshold, case .attribute(let value) = change.value
                else { return change }
                let bytes: [UInt8]
                switch value {
                case .binary(let b), .transformable(let b): bytes = b
                default: return change
                }
                guard bytes.count >= threshold else { return change }
                let blob = BlobReference(
                    transactionID: transactionID, index: UInt32(blobs.count), byteCount: UInt64(bytes.count))
                blobs.append(bytes)
                return PropertyChange(propertyIndex: change.propertyIndex, value: .attribute(.blob(blob)))
            }
        }
        guard model.entities.contains(where: { !$0.externalStoragePropertyIndices.isEmpty }) else { return }
        for position in operations.indices {
            switch operations[position] {
            case .insert(let reference, let changes)
            where !model.entities[Int(reference.entityIndex)].externalStoragePropertyIndices.isEmpty:
                operations[position] = .insert(reference, convert(reference, changes))
            case .update(let reference, let changes)
            where !model.entities[Int(reference.entityIndex)].externalStoragePropertyIndices.isEmpty:
                operations[position] = .update(reference, convert(reference, changes))
            default:
                continue
            }
        }
    }

    // MARK: - Uniqueness

    /// The uniqueness constraints a save's rows would violate.
    ///
    /// - Parameter claimed: receives the unique tuples of the save's new rows, each with the key of the object that
    ///   takes it (the last one to, in the order of the staged changes), as ``CommitQueue/enqueue(_:releasing:claiming:)``
    ///   records them.
    /// - Throws: the error of a checkpoint chunk that a holder lookup cannot load.
    func uniquenessFailures(
        _ staged: StagedChanges, in state: StoreState, _ queue: CommitQueue, claimed: inout [UniqueKey: UInt64]
    ) throws(EventGraphError) -> [EventGraphError.Failure] {
        var failures: [EventGraphError.Failure] = []
        if model.entities.contains(where: { !$0.uniqueConstraints.isEmpty }) {
            claimed.reserveCapacity(staged.count)
        }
        /// Claims one tuple of the row at `position` for its object; records a failure when another object holds it.
        /// `ordinal` is the constraint's position in the row's entity's constraints.
        func claim(_ tuple: UniqueKey, position: Int, ordinal: Int) throws(EventGraphError) {
            // The key alone: the row, its entity and the constraint are read only for a holder in the save or a
            // failure (each read retained and released shared objects, per tuple).
            let key = staged.changes[position].key
            func declaredConstraint() -> UniqueConstraint {
                model.entities[staged.changes[position].entityIndex].uniqueConstraints[ordinal]
            }
            var clash: UInt64?
            // One lookup: the tuple's earlier claimant, if any, replaced by this object.
            if let other = claimed.updateValue(key, forKey: tuple), other != key { clash = other }
            if clash == nil, let holder = try queue.holder(of: tuple, in: state), holder != key {
                if let entry = staged[holder] {
                    if let holderRow = entry.row, UniqueKey(declaredConstraint(), values: holderRow.values) == tuple {
                        clash = holder
                    }
                } else {
                    clash = holder
                }
            }
            guard let clash else { return }
            let change = staged.changes[position]
            guard let row = change.row else { return }
            let entity = model.entities[change.entityIndex]
            let constraint = declaredConstraint()
            let values = tuple.values.map { "\($0)" }.joined(separator: ", ")
            failures.append(
                EventGraphError.Failure(
                    entityName: entity.name, objectID: objectID(for: row.reference),
                    propertyName: constraint.propertyNames.joined(separator: "+"),
                    message:
                        "\(constraint.propertyNames.joined(separator: ", ")) = \(values) is already used by \(objectID(for: ObjectReference(entityIndex: UInt32(change.entityIndex), key: clash)).uriString)"
                ))
        }
        // Taken by the staging, in the order below: no row is read again.
        if let newTuples = staged.newTuples {
            for new in newTuples { try claim(new.tuple, position: new.position, ordinal: new.ordinal) }
            return failures
        }
        // `staged` is alive and unchanged for the pass: its elements are read in place by the prefetches.
        let elements = SavePrefetch.elements(of: staged.changes)
        for (position, change) in staged.changes.enumerated() {
            // Asked for a few rows ahead: each new row and the values it reads (a unique tuple's), cold in a bulk
            // save (see `SavePrefetch`).
            SavePrefetch.prefetchAhead(in: elements, from: position, lists: false, strings: false)
            guard let row = change.row else { continue }
            for (ordinal, constraint) in model.entities[change.entityIndex].uniqueConstraints.enumerated() {
                guard let tuple = UniqueKey(constraint, values: row.values) else { continue }
                try claim(tuple, position: position, ordinal: ordinal)
            }
        }
        return failures
    }
}
