import LogFormat

extension ObjectContext {
    /// Saves every unsaved change as one changeset appended to the log: all or nothing.
    ///
    /// The save validates every inserted and updated object, checks `deny` rules of deleted objects, then —
    /// under the store's commit lock — detects conflicts with other contexts' saves (see ``mergePolicy``),
    /// checks uniqueness constraints against the store, and queues the changeset in the log; then, without the
    /// lock, waits until it is durable (concurrent saves share one sync) and installs it. Inserted objects get
    /// permanent IDs. When the save throws, neither the log, the store nor other contexts see anything of
    /// it, and this context keeps its unsaved changes.
    ///
    /// - Throws: ``EventGraphError`` with code `validation`, `deleteDenied`, `uniqueness`, `conflict`, `readOnly`
    ///   or `log`; ``EventGraphError/failures`` lists every failing object and property.
    public func save() throws(EventGraphError) {
        applyDeferredInverseAppends()
        processPendingChanges()
        let inserted = insertedList.filter { $0.flags.contains(.isInserted) && !$0.flags.contains(.isDeleted) }
        let deleted = deletedList.filter {
            $0.flags.contains(.isDeleted) && !$0.flags.contains(.isInserted) && !$0.flags.contains(.isDead)
        }
        let updated = changedList.filter {
            !$0.flags.contains(.isInserted) && !$0.flags.contains(.isDeleted) && !$0.flags.contains(.isDead)
                && $0.hasPersistentChanges
        }
        let abandoned = insertedList.filter { $0.flags.contains(.isInserted) && $0.flags.contains(.isDeleted) }
        guard !inserted.isEmpty || !deleted.isEmpty || !updated.isEmpty else {
            finishSave(inserted: [], updated: [], deleted: [], abandoned: abandoned, result: nil)
            changeTracking.reported.removeAll()
            return
        }
        guard !parentStore.isReadOnly else {
            throw EventGraphError(.readOnly, "the store is read-only (an as-of view)")
        }
        // A version held for lookups by ID would make the commit copy every array of it that the commit writes.
        lookupCache.release()

        try refuseChangesInUnmountedStores(updated + deleted)
        // What the save reads of the committed values of the objects it changes or deletes — validation, the
        // operations, a child's conflict check, the rows it holds afterwards — is read from checkpoint chunks for
        // objects read from a checkpoint, and such a read cannot throw: their chunks are loaded now and kept decoded
        // until the save ends, so that one that cannot be read fails the save here, before anything changed.
        let pins = try pinCommittedValues(of: updated, deleted)
        defer { pins.unpin() }
        var denied: [EventGraphError.Failure] = []
        for object in deleted { denied += denyFailures(of: object) }
        guard denied.isEmpty else {
            throw EventGraphError(.deleteDenied, "\(denied.count) delete(s) refused by deny rules", failures: denied)
        }
        var failures: [EventGraphError.Failure] = []
        var request = CommitRequest(author: name, operations: [], readRows: [:], mergePolicy: mergePolicy)
        request.operations.reserveCapacity(inserted.count + updated.count + deleted.count)
        let listedCounts = (insertedList.count, changedList.count, deletedList.count)
        // `inserted` is alive and unchanged for the whole save: its elements are read in place by the prefetches.
        let insertedObjects = SavePrefetch.elements(of: inserted)
        for (position, object) in inserted.enumerated() {
            // Asked for a few objects ahead: what validation and the insert read of each new object, which a bulk
            // save finds cold (see `SavePrefetch`).
            ManagedObject.prefetchAhead(in: insertedObjects, from: position, strings: true)
            failures += validationFailures(of: object)
            // Built in the same pass as the validation, while the object's values are in the cache (a bulk save's
            // 100,000 objects do not fit in it); dropped when a validation fails. Staged: a later validation that
            // changes the object is noted, and its operation built again below.
            guard failures.isEmpty else { continue }
            appendInsert(of: object, to: &request)
            object.flags.insert(.isStagedForSave)
        }
        for object in updated { failures += validationFailures(of: object) }
        guard failures.isEmpty else {
            unstage(inserted)
            throw EventGraphError(.validation, "\(failures.count) validation failure(s)", failures: failures)
        }
        if listedCounts != (insertedList.count, changedList.count, deletedList.count) {
            unstage(inserted)
            throw changesOutsideTheSave(listedCounts)
        }
        if !changedAfterStaging.isEmpty { rebuildInserts(in: &request) }
        for object in updated {
            appendUpdate(of: object, to: &request)
        }
        for object in deleted {
            request.operations.append(.delete(reference(to: object)))
            if let row = object.row { request.readRows[object.identity] = row }
        }
        guard !request.operations.isEmpty else {
            // Only values equal to those beneath were set: a root logs no empty transaction.
            finishSave(inserted: [], updated: updated, deleted: [], abandoned: abandoned, result: nil)
            changeTracking.reported.removeAll()
            return
        }
        let result: CommitResult
        do {
            result = try parentStore.commit(request)
        } catch {
            unstage(inserted)
            throw error
        }
        finishSave(inserted: inserted, updated: updated, deleted: deleted, abandoned: abandoned, result: result)
        reportSave(of: request, result: result)
    }

    /// Loads and pins the checkpoint chunks that the committed values of `updated` and `deleted` read from (see
    /// ``CheckpointChunkPinSet``); an object that is still a fault without values is fulfilled first, through the
    /// lookup that throws.
    ///
    /// - Throws: the error of a checkpoint chunk that cannot be loaded (nothing stays pinned then).
    private func pinCommittedValues(of updated: [ManagedObject], _ deleted: [ManagedObject]) throws(EventGraphError)
        -> CheckpointChunkPinSet
    {
        var pins = CheckpointChunkPinSet()
        do throws(EventGraphError) {
            for object in [updated, deleted].joined() {
                if object.flags.contains(.isFault) && object.committed == nil {
                    object.fulfilFault(
                        with: try parentStore.lookUpCommittedRow(of: object.identity, entityIndex: object.entity.index))
                }
                try pins.pin(object.committed)
            }
        } catch {
            pins.unpin()
            throw error
        }
        return pins
    }

    /// Ends the staging of a save's inserted objects that does not finish (``finishSave`` ends it otherwise).
    private func unstage(_ inserted: [ManagedObject]) {
        for object in inserted { object.flags.remove(.isStagedForSave) }
        changedAfterStaging.removeAll()
    }

    /// Builds again the insert operations of the objects that validation changed after they were built: the save
    /// holds their values as validation left them (as it did when every object was validated first).
    private func rebuildInserts(in request: inout CommitRequest) {
        var positions: [ObjectIdentity: Int] = [:]
        for (position, operation) in request.operations.enumerated() {
            if case .insert(let reference, _) = operation { positions[reference.identity] = position }
        }
        for object in changedAfterStaging {
            guard let position = positions[object.identity] else { continue }
            var rebuilt = CommitRequest(author: name, operations: [], readRows: [:], mergePolicy: mergePolicy)
            appendInsert(of: object, to: &rebuilt)
            request.operations[position] = rebuilt.operations[0]
        }
        changedAfterStaging.removeAll()
    }

    /// The error of a save whose validation inserted, deleted or changed objects that the save had not (the lists
    /// were `listedCounts` long before it ran): validation must not change objects, and the save would otherwise
    /// leave these changes out silently.
    private func changesOutsideTheSave(_ listedCounts: (Int, Int, Int)) -> EventGraphError {
        let (inserted, changed, deleted) = listedCounts
        let failures =
            insertedList[inserted...].map { ($0, "was inserted") } + changedList[changed...].map { ($0, "was changed") }
            + deletedList[deleted...].map { ($0, "was deleted") }
        return EventGraphError(
            .validation,
            "validation changed \(failures.count) object(s) that the save had not changed: validation must not "
                + "insert, delete or change objects",
            failures: failures.map { object, what in
                EventGraphError.Failure(
                    entityName: object.entity.name, objectID: object.objectID, propertyName: nil,
                    message: "\(what) by a validation during the save")
            })
    }

    /// Records an inserted object's persistent values that differ from their defaults, in property order (see
    /// ``ManagedObject/insertChanges()``).
    private func appendInsert(of object: ManagedObject, to request: inout CommitRequest) {
        request.operations.append(.insert(reference(to: object), object.insertChanges()))
        if !upsertKeys.isEmpty, let ordinal = upsertKeys[object.identity] {
            request.upserts[object.identity] = ordinal
        }
    }

    /// Records an updated object's changes: scalar properties as one update, to-many ones as added/removed.
    private func appendUpdate(of object: ManagedObject, to request: inout CommitRequest) {
        let entity = object.entity
        if object.row == nil { object.fireFault() }
        guard let row = object.row else { return }
        var scalar: [PropertyChange] = []
        // A child pushes every attribute it set, also to the value it read (Core Data's rule): its own value stands
        // over a later one of the parent, as the child showed it. A root does not log a value the store holds, and
        // an unchanged relationship is no change of either side, so the inverses beneath stay as they are.
        let pushesEverySetAttribute = parentStore is ParentContextStore
        for entry in object.pending.sorted(by: { $0.index < $1.index }) where entity.isPersistentProperty[entry.index] {
            let old = row.values[entry.index]
            guard entry.value != old || (pushesEverySetAttribute && entity.properties[entry.index].attribute != nil)
            else { continue }
            if case .toMany(let newTargets) = entry.value, case .toMany(let oldTargets) = old,
                let relationship = entity.properties[entry.index].relationship
            {
                // The usual change, targets appended to the committed list (an inverse kept up to date as objects
                // are inserted), is found by one comparison instead of hashing both lists; lists hold no
                // duplicates, so the appended targets are exactly the added ones.
                if newTargets.count > oldTargets.count, newTargets.starts(with: oldTargets) {
                    request.operations.append(
                        .relate(
                            reference(to: object), propertyIndex: UInt32(entry.index),
                            added: Array(newTargets[oldTargets.count...]), removed: []))
                    continue
                }
                let newIdentities = Set(newTargets.map(\.identity))
                let oldIdentities = Set(oldTargets.map(\.identity))
                let added = newTargets.filter { !oldIdentities.contains($0.identity) }
                let removed = oldTargets.filter { !newIdentities.contains($0.identity) }
                let merged = oldTargets.filter { newIdentities.contains($0.identity) } + added
                if relationship.isOrdered && merged != newTargets {
                    // A reordering cannot be expressed as additions and removals.
                    scalar.append(PropertyChange(propertyIndex: UInt32(entry.index), value: entry.value))
                } else if !added.isEmpty || !removed.isEmpty {
                    request.operations.append(
                        .relate(
                            reference(to: object), propertyIndex: UInt32(entry.index), added: added, removed: removed))
                }
                continue
            }
            scalar.append(PropertyChange(propertyIndex: UInt32(entry.index), value: entry.value))
        }
        if !scalar.isEmpty {
            request.operations.append(.update(reference(to: object), scalar))
            request.readRows[object.identity] = row
        }
    }

    /// Brings the context's objects in line with the committed state after a successful save.
    private func finishSave(
        inserted: [ManagedObject], updated: [ManagedObject], deleted: [ManagedObject], abandoned: [ManagedObject],
        result: CommitResult?
    ) {
        let rows = result?.rows ?? []
        var committed = CommittedRowMatcher(rows)
        for (inserted, permanent) in result?.permanentIdentities ?? [:] {
            guard let object = registered.removeValue(forKey: inserted) else { continue }
            registered[permanent]?.flags.insert(.isFault)
            object.identity = permanent
            registered[permanent] = object
        }
        changeTracking.deliverRenames(result?.permanentIdentities ?? [:])
        renameInChildren(result?.permanentIdentities ?? [:])
        // A child's push returns no rows for its inserts: the parent holds exactly these values.
        let isChild = parentStore is ParentContextStore
        func finish(_ object: ManagedObject) {
            let wasInserted = object.flags.contains(.isInserted)
            object.flags.remove([.isInserted, .isListedAsChanged, .isStagedForSave])
            if isChild && wasInserted {
                object.row = ParentContextStore.row(overlaying: object)
            } else if let row = committed.row(of: object.identity) {
                object.row = row
            } else {
                // For a root, an object the commit returned no row for (set to the values it holds) is one whose
                // chunk the save pinned (`pinCommittedValues`, until it ends) or one in memory: this reads no chunk
                // that can fail, a compaction beside the save included, which does not replace the store's chunks
                // (it reads them from the file the store opened, `CheckpointChunkSource`; `MergeChunkFailureTests`).
                // A child's (a relationship set to the targets it held) is looked up in its parent, whose object may
                // read a chunk evicted since and unreadable now: then it becomes a fault, as a child's merge leaves
                // it, and its next read looks it up again (`ChildSaveFallbackChunkFailureTests`).
                do {
                    object.row =
                        try parentStore.lookUpCommittedRow(of: object.identity, entityIndex: object.entity.index)?.row
                } catch {
                    refresh(object, mergeChanges: true)
                }
            }
            let entity = object.entity
            if entity.hasTransientProperties {
                let persistent = entity.isPersistentProperty
                object.pending.removeAll { persistent[$0.index] }
            } else {
                object.pending = []
            }
        }
        // `inserted` is alive and unchanged here: its elements are read in place by the prefetches.
        let insertedObjects = SavePrefetch.elements(of: inserted)
        for (position, object) in inserted.enumerated() {
            // Asked for a few objects ahead: each object's fields and the header of its values' array, which
            // letting go of it writes (see `SavePrefetch`).
            ManagedObject.prefetchForRelease(in: insertedObjects, from: position)
            finish(object)
        }
        for object in updated { finish(object) }
        // The store may have changed objects this save did not (the other side of a relationship it kept in
        // agreement): objects of this context that hold an older row take the saved one, so they agree with it. A
        // push returns rows of the objects it was given only, which the loop above updated.
        for case (let identity, let row?) in isChild ? [] : rows {
            guard let object = registered[identity], let held = object.row, held !== row, !object.hasPersistentChanges,
                !object.flags.contains(.isInserted)
            else { continue }
            object.row = row
            object.loadedBlobs.removeAll()
        }
        if !deleted.isEmpty || !abandoned.isEmpty {
            // They leave the context (as in Core Data, a deleted object's context is `nil` after the save); their IDs
            // stay valid after the context is gone.
            let detachment = Detachment(
                storeUUIDs: parentStore.storeUUIDs, contextName: name, reason: .deleted, model: model)
            for object in [deleted, abandoned].joined() { object.detach(detachment) }
        }
        for object in [deleted, abandoned].joined() {
            registered[object.identity] = nil
            object.flags = [.isDead]
            object.pending.removeAll()
            object.row = nil
        }
        for object in changedList { object.flags.remove(.isListedAsChanged) }
        insertedList.removeAll()
        changedList.removeAll()
        deletedList.removeAll()
        upsertKeys.removeAll()
    }
}
