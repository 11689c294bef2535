import LogFormat

/// A child's save: its changes become the parent's unsaved changes, after the merge policy has settled conflicts
/// with what the parent (or a sibling pushing into it) changed since the child read the objects.
extension ParentContextStore {
    /// The properties of each object whose parent value stands (`storeWins`), and the objects whose changes are
    /// dropped whole because the parent deleted them meanwhile. Throws under `error`, before anything is applied.
    ///
    /// Rows the parent serves carry the version of the row beneath, which a change in the parent does not move, so
    /// a conflict is found by comparing values: the row the child read against the parent's row now.
    func resolveConflicts(_ request: CommitRequest) throws(EventGraphError) -> [ObjectIdentity: Set<Int>?] {
        var kept: [ObjectIdentity: Set<Int>?] = [:]
        var failures: [EventGraphError.Failure] = []
        for (identity, read) in request.readRows.sorted(by: { $0.key.key < $1.key.key }) {
            let entity = model.entities[read.entityIndex]
            let id = objectID(of: identity, entityName: entity.name)
            guard let now = try lookUpCommittedRow(of: identity, entityIndex: read.entityIndex)?.row else {
                if request.mergePolicy == .error {
                    failures.append(
                        EventGraphError.Failure(
                            entityName: entity.name, objectID: id, propertyName: nil,
                            message: "was deleted in the parent context since this context read it"))
                }
                kept[identity] = .some(nil)
                continue
            }
            let changed = Set(read.values.indices.filter { read.values[$0] != now.values[$0] })
            guard !changed.isEmpty else { continue }
            switch request.mergePolicy {
            case .error:
                let names = changed.sorted().map { entity.properties[$0].name }.joined(separator: ", ")
                failures.append(
                    EventGraphError.Failure(
                        entityName: entity.name, objectID: id, propertyName: nil,
                        message: "was changed in the parent context since this context read it (\(names))"))
            case .storeWins: kept[identity] = changed
            case .objectWins: break
            }
        }
        guard failures.isEmpty else {
            throw EventGraphError(
                .conflict, "\(failures.count) object(s) changed in the parent context since this context read them",
                failures: failures)
        }
        return kept
    }

    /// What a push reads beneath the parent, read before anything is applied (see ``commit(_:)``).
    struct LookupsBeneath {
        /// The committed row beneath the parent of each object the push updates or relates that the parent did not
        /// insert and that has one, and of each object it deletes that the parent holds as a fault or not at all.
        var rows: [ObjectIdentity: CommittedRow] = [:]
        /// The objects whose lookup beneath ``rows`` holds (absent there: nothing is committed), which the push may
        /// find as faults of the parent and fulfil with that row (a fault's own lookup cannot throw).
        var lookedUp: Set<ObjectIdentity> = []
        /// The objects the push deletes that are hidden from the parent's view and exist beneath it (see
        /// `existsBeneathParent(_:)`).
        var hiddenButExisting: Set<ObjectIdentity> = []

        /// The checkpoint chunks the push reads committed values from, kept decoded until ``unpin()``: a value read
        /// cannot throw, and a chunk evicted in the middle of the push might not be read again. Bounded by the
        /// objects the push changes (see ``CheckpointChunkPinSet``).
        private(set) var pins = CheckpointChunkPinSet()

        /// Looks `reference` up in `store` once, noting its row if it has one and pinning its chunk.
        ///
        /// - Throws: the error of a checkpoint chunk that may hold the object and cannot be loaded.
        mutating func lookUp(_ reference: ObjectReference, in store: any ObjectStore) throws(EventGraphError) {
            let identity = reference.identity
            guard lookedUp.insert(identity).inserted else { return }
            rows[identity] = try store.lookUpCommittedRow(of: identity, entityIndex: Int(reference.entityIndex))
            try pins.pin(rows[identity]?.values)
        }

        /// Keeps the checkpoint chunk that `values` read from decoded until ``unpin()``, if they read one (a slot,
        /// or a handle row on one).
        ///
        /// - Throws: the chunk's error when it cannot be loaded (it is not pinned then).
        mutating func pinChunk(of values: CommittedValues) throws(EventGraphError) {
            try pins.pin(values)
        }

        /// Lets the cache evict the chunks pinned for the push again.
        func unpin() {
            pins.unpin()
        }
    }

    /// The lookups beneath the parent that applying `request` and answering its rows need.
    ///
    /// - Throws: the error of a checkpoint chunk that may hold one of the objects and cannot be loaded.
    func lookUpBeneath(_ request: CommitRequest, keeping kept: [ObjectIdentity: Set<Int>?]) throws(EventGraphError)
        -> LookupsBeneath
    {
        var lookups = LookupsBeneath()
        do throws(EventGraphError) {
            try lookUpBeneath(request, keeping: kept, into: &lookups)
        } catch {
            lookups.unpin()
            throw error
        }
        return lookups
    }

    /// ``lookUpBeneath(_:keeping:)`` into `lookups`, which the caller unpins when this throws.
    private func lookUpBeneath(
        _ request: CommitRequest, keeping kept: [ObjectIdentity: Set<Int>?], into lookups: inout LookupsBeneath
    ) throws(EventGraphError) {
        for operation in request.operations {
            switch operation {
            case .insert: continue
            case .update(let reference, _), .relate(let reference, _, _, _):
                let object = parent.registered[reference.identity]
                guard object?.flags.contains(.isInserted) != true else { continue }
                // The parent's object reads its own committed values when it holds them, the row beneath otherwise.
                if let committed = object?.committed {
                    try lookups.pinChunk(of: committed)
                }
                try lookups.lookUp(reference, in: base)
            case .delete(let reference):
                // As `apply(_:request:keeping:beneath:touched:)` asks: for an object hidden from the parent, whether
                // it exists beneath; for one it deletes, its row when the parent holds it as a fault or not at all.
                let object = parent.registered[reference.identity]
                let isHidden =
                    kept[reference.identity] == .some(nil)
                    || object.map { $0.flags.contains(.isDeleted) || $0.flags.contains(.isDead) } == true
                if isHidden {
                    if try existsBeneathParent(reference) { lookups.hiddenButExisting.insert(reference.identity) }
                } else if object.map({ $0.flags.contains(.isFault) && $0.committed == nil }) ?? true {
                    try lookups.lookUp(reference, in: base)
                }
            }
        }
    }

    /// Fulfils the parent's `object` if it is a fault, with its row looked up before the push (``LookupsBeneath``).
    private func fulfilFault(_ object: ManagedObject, beneath: LookupsBeneath) {
        guard object.flags.contains(.isFault) else { return }
        guard beneath.lookedUp.contains(object.identity) else { return object.fireFault() }
        object.fulfilFault(with: beneath.rows[object.identity])
    }

    /// Applies one operation of a child's changeset to the parent, as the parent's own unsaved change. The child
    /// recorded both sides of every relationship and every propagated delete, so values are set as they are.
    func apply(
        _ operation: ChangeOperation, request: CommitRequest, keeping kept: [ObjectIdentity: Set<Int>?],
        beneath: LookupsBeneath, touched: inout [ObjectIdentity: ObjectReference]
    ) {
        switch operation {
        case .insert(let reference, let changes):
            insert(reference, changes, request: request)
        case .update(let reference, let changes):
            guard let object = liveObject(reference, kept: kept) else { return }
            fulfilFault(object, beneath: beneath)
            let parentWins = kept[reference.identity] ?? nil
            for change in changes where parentWins?.contains(Int(change.propertyIndex)) != true {
                object.setPendingValue(change.value, at: Int(change.propertyIndex))
            }
            touched[reference.identity] = reference
        case .relate(let reference, let propertyIndex, let added, let removed):
            guard let object = liveObject(reference, kept: kept) else { return }
            fulfilFault(object, beneath: beneath)
            let removing = Set(removed.map(\.identity))
            object.modifyPendingToMany(at: Int(propertyIndex)) { references in
                references.removeAll { removing.contains($0.identity) }
                let present = Set(references.map(\.identity))
                references += added.filter { !present.contains($0.identity) }
            }
            touched[reference.identity] = reference
        case .delete(let reference):
            if let object = liveObject(reference, kept: kept) {
                fulfilFault(object, beneath: beneath)
                markDeleted(object, reference: reference, touched: &touched)
                return
            }
            // The rule, as Core Data's: a child's delete becomes the parent's own unsaved delete even when the
            // parent's view had already lost the object to an unsaved delete of a context beneath it. That delete
            // may be rolled back, and the object must then stay deleted for the parent, as the child showed it.
            // Nothing is needed when the parent deleted the object itself (its rollback undoes the child's push
            // with the rest of its changes, as Core Data's does) or when the object exists nowhere beneath.
            let object = parent.object(for: reference)
            guard !object.flags.contains(.isDeleted), !object.flags.contains(.isDead),
                beneath.hiddenButExisting.contains(reference.identity)
            else { return }
            // The object stays a fault: the row beneath is not the one the child read, so recording it as read
            // would make a conflict of a delete that both sides want.
            markDeleted(object, reference: reference, touched: &touched)
        }
    }

    /// Makes a child's inserted object the parent's own unsaved insert.
    ///
    /// The pushed values are the child's persistent values that differ from the defaults, one per property, so
    /// they become the new object's unsaved values as they are, in one piece.
    private func insert(_ reference: ObjectReference, _ changes: [PropertyChange], request: CommitRequest) {
        let identity = reference.identity
        let object = parent.newObject(
            of: model.entities[Int(reference.entityIndex)], identity: identity, flags: [.isInserted])
        object.pending = changes
        let previous = parent.registered.updateValue(object, forKey: identity)
        precondition(previous == nil, "\(identity) is already registered in the parent")
        parent.insertedList.append(object)
        if let ordinal = request.upserts[identity] { parent.upsertKeys[identity] = ordinal }
    }

    private func markDeleted(
        _ object: ManagedObject, reference: ObjectReference, touched: inout [ObjectIdentity: ObjectReference]
    ) {
        object.flags.insert(.isDeleted)
        parent.deletedList.append(object)
        touched[reference.identity] = reference
    }

    /// Whether an object hidden from the parent's view exists beneath it: inserted by a context further down (its
    /// insert not yet saved), or committed and not deleted in the store.
    ///
    /// - Throws: the error of a checkpoint chunk that may hold the object and cannot be loaded.
    private func existsBeneathParent(_ reference: ObjectReference) throws(EventGraphError) -> Bool {
        var store = parent.parentStore
        while let next = store as? ParentContextStore {
            if next.parent.registered[reference.identity]?.flags.contains(.isInserted) == true { return true }
            store = next.parent.parentStore
        }
        return try store.lookUpCommittedRow(of: reference.identity, entityIndex: Int(reference.entityIndex)) != nil
    }

    /// The parent's object for a reference, unless the parent deleted it (the child's change of it is dropped).
    private func liveObject(_ reference: ObjectReference, kept: [ObjectIdentity: Set<Int>?]) -> ManagedObject? {
        if case .some(nil) = kept[reference.identity] { return nil }
        let object = parent.object(for: reference)
        guard !object.flags.contains(.isDeleted), !object.flags.contains(.isDead) else { return nil }
        return object
    }
}
