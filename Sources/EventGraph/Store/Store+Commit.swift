import LogFormat

extension Store {
    /// Commits one changeset: resolves upserts and conflicts against the committed state and the saves queued
    /// before it, moves large binary values to blobs, checks uniqueness and queues the changeset in the log — all
    /// under the commit lock; then waits, without the lock, until the log has made it durable (concurrent saves
    /// share one sync), and installs it and every earlier queued save, in order. All or nothing.
    ///
    /// Nothing changes (neither the log nor the snapshot) when this throws before queuing; when the log fails to
    /// make the changeset durable, nothing is installed and the store refuses further saves until it is reopened.
    func commit(_ request: CommitRequest) throws(EventGraphError) -> CommitResult {
        guard !isReadOnly else { throw EventGraphError(.readOnly, "the store is read-only") }
        let model = self.model
        let (queued, staged, mergedKeys) = try withCommitLock {
            queue throws(EventGraphError) -> (QueuedTransaction, StagedChanges, [UInt64: UInt64]) in
            guard !queue.isClosed else { throw EventGraphError(.closed, "the store is closed") }
            if let failure = queue.failure {
                throw EventGraphError(
                    .log, "the store refuses saves after the log failed (\(failure.message)); reopen it to recover")
            }
            var operations = request.operations
            // The last ID comes from the log, which may end at the largest one.
            guard queue.lastTransactionID < UInt64.max else {
                throw EventGraphError(
                    LogFormatError(
                        .limitExceeded,
                        "the store is full: its last transaction ID is \(queue.lastTransactionID), the largest there "
                            + "is; no further save can be numbered"))
            }
            let transactionID = queue.lastTransactionID + 1
            if let exhausted = request.operations.lazy.compactMap(Self.exhaustedInsert).first {
                throw EventGraphError(
                    LogFormatError(
                        .limitExceeded,
                        "the store is full: it has handed out every object key, so the new "
                            + "\(model.entities[Int(exhausted.entityIndex)].name) cannot be saved"))
            }
            let mergedKeys = resolveUpserts(&operations, request.upserts, queue)
            let pinned = try resolveConflicts(&operations, request, queue)
            repairInverses(&operations, pinned: pinned, queue)
            var blobs: [[UInt8]] = []
            externalize(&operations, transactionID: transactionID, blobs: &blobs)
            let changeset = Changeset(
                transactionID: transactionID,
                commitTimeMicroseconds: max(Self.nowMicroseconds(), queue.lastCommitTimeMicroseconds),
                author: request.author, nextKey: keyWatermark, operations: operations)
            let overlay = queue.overlayRows
            let staged = try state.withLock { state throws(EventGraphError) in
                try state.stage(changeset, model: model, overlay: overlay)
            }
            let failures = state.withLock { uniquenessFailures(staged, in: $0, queue) }
            guard failures.isEmpty else {
                throw EventGraphError(
                    .uniqueness, "the save would violate \(failures.count) uniqueness constraint(s)", failures: failures
                )
            }
            let payload: [UInt8]
            do throws(LogFormatError) { payload = try changeset.encoded() } catch { throw EventGraphError(error) }
            let queued = try backend.enqueueTransaction(id: transactionID, payload: payload, blobs: blobs)
            let entry = CommitQueue.Entry(
                transactionID: transactionID, commitTimeMicroseconds: changeset.commitTimeMicroseconds,
                nextKey: changeset.nextKey, staged: staged, blobHandles: queued.blobHandles, uniqueKeys: [],
                changeset: changeset)
            state.withLock { state in queue.enqueue(entry, state: state, model: model) }
            return (queued, staged, mergedKeys)
        }
        do {
            try backend.waitUntilDurable(queued)
        } catch {
            withCommitLock { queue in
                // This save and every later queued one never become visible; earlier ones are installed by their
                // own (successful) waits.
                if queue.failure == nil { queue.failure = error }
                queue.queued.removeAll { $0.transactionID >= queued.transactionID }
            }
            throw error
        }
        installDurable(through: queued.transactionID)
        var rows: [UInt64: Row?] = [:]
        rows.reserveCapacity(staged.rows.count)
        for (key, entry) in staged.rows { rows[key] = entry.row }
        return CommitResult(transactionID: queued.transactionID, rows: rows, mergedKeys: mergedKeys)
    }

    /// Installs every queued save up to `transactionID` (all durable: the log is synced in order), in order, and
    /// publishes them to the commit observers (delivered after the lock is released).
    private func installDurable(through transactionID: UInt64) {
        let model = self.model
        withCommitLock { queue in
            let done = queue.dequeue(through: transactionID)
            guard !done.isEmpty else { return }
            state.withLock { state in
                for entry in done {
                    state.install(entry.staged, model: model)
                    for (index, handle) in entry.blobHandles.enumerated() {
                        state.blobHandles[BlobKey(transactionID: entry.transactionID, index: UInt32(index))] = handle
                    }
                    state.lastTransactionID = entry.transactionID
                    state.lastCommitTimeMicroseconds = entry.commitTimeMicroseconds
                    state.nextKey = entry.nextKey
                }
            }
            observers.publish(done.lazy.map(\.changeset))
        }
        observers.deliverPending()
    }

    // MARK: - Upserts

    /// Turns inserts whose unique values already exist in the store into updates of the existing objects.
    private func resolveUpserts(_ operations: inout [ChangeOperation], _ upserts: [UInt64: Int], _ queue: CommitQueue)
        -> [UInt64: UInt64]
    {
        guard !upserts.isEmpty else { return [:] }
        var merged: [UInt64: ObjectReference] = [:]
        for operation in operations {
            guard case .insert(let reference, let changes) = operation, let ordinal = upserts[reference.key] else {
                continue
            }
            let entity = model.entities[Int(reference.entityIndex)]
            var values = entity.defaultValues
            for change in changes { values[Int(change.propertyIndex)] = change.value }
            guard let tuple = UniqueKey(entity.uniqueConstraints[ordinal], values: values) else { continue }
            let family = model.entities[tuple.entityIndex].familyIndices
            let found = state.withLock { state -> Row? in
                guard let existingKey = queue.holder(of: tuple, in: state) else { return nil }
                return queue.row(forKey: existingKey, in: family, state: state)
            }
            guard let existing = found else { continue }
            merged[reference.key] = existing.reference
        }
        guard !merged.isEmpty else { return [:] }
        func map(_ reference: ObjectReference) -> ObjectReference { merged[reference.key] ?? reference }
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
                guard let target = merged[reference.key] else {
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
        return merged.mapValues(\.key)
    }

    // MARK: - Conflicts

    /// Checks every changed object against the committed state; applies the merge policy or throws. Returns the
    /// relationship slots whose change `storeWins` dropped (their store value stands, see ``InverseRepair``).
    private func resolveConflicts(_ operations: inout [ChangeOperation], _ request: CommitRequest, _ queue: CommitQueue)
        throws(EventGraphError) -> Set<InverseRepair.Slot>
    {
        var pinned: Set<InverseRepair.Slot> = []
        let policy = request.mergePolicy
        var inserted: Set<UInt64> = []
        inserted.reserveCapacity(operations.count)
        var referenced: Set<ObjectReference> = []
        var touched: [ObjectReference] = []
        for operation in operations {
            switch operation {
            case .insert(let reference, let changes):
                inserted.insert(reference.key)
                for change in changes {
                    if case .attribute = change.value { continue }
                    referenced.formUnion(change.value.references)
                }
            case .update(let reference, let changes):
                touched.append(reference)
                for change in changes { referenced.formUnion(change.value.references) }
            case .relate(let reference, _, let added, _):
                touched.append(reference)
                referenced.formUnion(added)
            case .delete(let reference):
                touched.append(reference)
            }
        }
        let lookups = touched + referenced.filter { !inserted.contains($0.key) }
        let current: [UInt64: Row] = state.withLock { state in
            var rows: [UInt64: Row] = [:]
            for reference in lookups {
                if let row = queue.row(entityIndex: Int(reference.entityIndex), key: reference.key, in: state) {
                    rows[reference.key] = row
                }
            }
            return rows
        }
        func exists(_ reference: ObjectReference) -> Bool {
            inserted.contains(reference.key) || current[reference.key] != nil
        }
        var failures: [EventGraphError.Failure] = []
        func fail(_ reference: ObjectReference, _ property: String?, _ message: String) {
            failures.append(
                EventGraphError.Failure(
                    entityName: model.entities[Int(reference.entityIndex)].name, objectID: objectID(for: reference),
                    propertyName: property, message: message))
        }
        func keepTargets(_ value: PropertyValue, of reference: ObjectReference, _ index: UInt32) -> PropertyValue {
            let property = model.entities[Int(reference.entityIndex)].properties[Int(index)].name
            switch value {
            case .attribute: return value
            case .toOne(let target):
                guard let target, !exists(target) else { return value }
                if policy == .error {
                    fail(reference, property, "refers to \(objectID(for: target)), which was deleted in the store")
                }
                return .toOne(nil)
            case .toMany(let targets):
                let missing = targets.filter { !exists($0) }
                guard !missing.isEmpty else { return value }
                if policy == .error {
                    fail(
                        reference, property,
                        "refers to \(missing.count) object(s) deleted in the store, such as \(objectID(for: missing[0]))"
                    )
                }
                return .toMany(targets.filter(exists))
            }
        }
        var resolved: [ChangeOperation] = []
        resolved.reserveCapacity(operations.count)
        for operation in operations {
            switch operation {
            case .insert(let reference, let changes):
                guard changes.contains(where: { if case .attribute = $0.value { false } else { true } }) else {
                    resolved.append(operation)
                    continue
                }
                resolved.append(
                    .insert(
                        reference,
                        changes.map {
                            PropertyChange(
                                propertyIndex: $0.propertyIndex,
                                value: keepTargets($0.value, of: reference, $0.propertyIndex))
                        }))
            case .update(let reference, var changes):
                guard let now = current[reference.key] else {
                    if policy == .error { fail(reference, nil, "was deleted in the store since this context read it") }
                    continue
                }
                if let read = request.readRows[reference.key], read.version != now.version {
                    switch policy {
                    case .error:
                        fail(
                            reference, nil,
                            "was changed in the store (transaction \(now.version)) since this context read it (transaction \(read.version))"
                        )
                    case .storeWins:
                        let changedInStore = { (index: UInt32) in read.values[Int(index)] != now.values[Int(index)] }
                        for change in changes where changedInStore(change.propertyIndex) {
                            pinned.insert(InverseRepair.Slot(key: reference.key, property: Int(change.propertyIndex)))
                        }
                        changes.removeAll { changedInStore($0.propertyIndex) }
                    case .objectWins:
                        break
                    }
                }
                changes = changes.map {
                    PropertyChange(
                        propertyIndex: $0.propertyIndex, value: keepTargets($0.value, of: reference, $0.propertyIndex))
                }
                if !changes.isEmpty { resolved.append(.update(reference, changes)) }
            case .relate(let reference, let index, let added, let removed):
                guard current[reference.key] != nil else {
                    if policy == .error { fail(reference, nil, "was deleted in the store since this context read it") }
                    continue
                }
                guard case .toMany(let kept) = keepTargets(.toMany(added), of: reference, index) else { continue }
                if !kept.isEmpty || !removed.isEmpty {
                    resolved.append(.relate(reference, propertyIndex: index, added: kept, removed: removed))
                }
            case .delete(let reference):
                guard let now = current[reference.key] else {
                    if policy == .error { fail(reference, nil, "was already deleted in the store") }
                    continue
                }
                if policy == .error, let read = request.readRows[reference.key], read.version != now.version {
                    fail(
                        reference, nil,
                        "was changed in the store (transaction \(now.version)) since this context read it (transaction \(read.version))"
                    )
                }
                resolved.append(.delete(reference))
            }
        }
        guard failures.isEmpty else {
            throw EventGraphError(
                .conflict, "\(failures.count) object(s) changed in the store since this context read them",
                failures: failures)
        }
        operations = resolved
        return pinned
    }

    // MARK: - External storage

    /// Replaces binary values at or above their attribute's threshold by blob references.
    private func externalize(_ operations: inout [ChangeOperation], transactionID: UInt64, blobs: inout [[UInt8]]) {
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

    private func uniquenessFailures(_ staged: StagedChanges, in state: StoreState, _ queue: CommitQueue)
        -> [EventGraphError.Failure]
    {
        var failures: [EventGraphError.Failure] = []
        var claimed: [UniqueKey: UInt64] = [:]
        if model.entities.contains(where: { !$0.uniqueConstraints.isEmpty }) {
            claimed.reserveCapacity(staged.order.count)
        }
        for key in staged.order {
            guard let (entityIndex, row) = staged.rows[key], let row else { continue }
            let entity = model.entities[entityIndex]
            for constraint in entity.uniqueConstraints {
                guard let tuple = UniqueKey(constraint, values: row.values) else { continue }
                var clash: UInt64?
                if let other = claimed[tuple], other != key { clash = other }
                claimed[tuple] = key
                if clash == nil, let holder = queue.holder(of: tuple, in: state), holder != key {
                    if let entry = staged.rows[holder] {
                        if let holderRow = entry.row, UniqueKey(constraint, values: holderRow.values) == tuple {
                            clash = holder
                        }
                    } else {
                        clash = holder
                    }
                }
                guard let clash else { continue }
                let values = tuple.values.map { "\($0)" }.joined(separator: ", ")
                failures.append(
                    EventGraphError.Failure(
                        entityName: entity.name, objectID: objectID(for: row.reference),
                        propertyName: constraint.propertyNames.joined(separator: "+"),
                        message:
                            "\(constraint.propertyNames.joined(separator: ", ")) = \(values) is already used by \(objectID(for: ObjectReference(entityIndex: UInt32(entityIndex), key: clash)).uriString)"
                    ))
            }
        }
        return failures
    }

    /// The permanent ID of a reference in this store.
    func objectID(for reference: ObjectReference) -> ObjectID {
        ObjectID(storeUUID: storeUUID, entityName: model.entities[Int(reference.entityIndex)].name, key: reference.key)
    }
}
