import LogFormat
import Synchronization

extension Store {
    /// Checks every changed object against the committed state and the saves queued before it; applies the merge
    /// policy or throws. Returns the relationship slots whose change `storeWins` dropped (their store value stands,
    /// see ``InverseRepair``).
    func resolveConflicts(_ operations: inout [ChangeOperation], _ request: CommitRequest, _ queue: CommitQueue)
        throws(EventGraphError) -> Set<InverseRepair.Slot>
    {
        // New objects that point only at each other (or into other stores) meet nothing that could have changed.
        if Self.isSelfContainedInsertion(operations) { return [] }
        let footprint = ChangeFootprint(operations)
        var resolution = ConflictResolution(
            model: model, policy: request.mergePolicy, readRows: request.readRows, inserted: footprint.inserted,
            current: currentRows(of: footprint.lookups, queue), objectID: objectID(for:))
        var resolved: [ChangeOperation] = []
        resolved.reserveCapacity(operations.count)
        for operation in operations {
            if let kept = resolution.resolve(operation) { resolved.append(kept) }
        }
        guard resolution.failures.isEmpty else {
            throw EventGraphError(
                .conflict, "\(resolution.failures.count) object(s) changed in the store since this context read them",
                failures: resolution.failures)
        }
        operations = resolved
        return resolution.pinned
    }

    /// Whether a changeset only inserts objects, and every relationship target it names in this store is one of
    /// them: then the merge policy has nothing to decide (no object was read, no target can have been deleted
    /// meanwhile) and ``resolveConflicts(_:_:_:)`` would return the operations as they are. Uniqueness is checked
    /// apart from this, for every save.
    static func isSelfContainedInsertion(_ operations: [ChangeOperation]) -> Bool {
        guard !operations.isEmpty else { return true }
        guard let inserted = InsertedKeys(insertsOf: operations) else { return false }
        func isInserted(_ target: ObjectReference) -> Bool {
            target.storeIndex != ownStoreIndex || inserted.contains(target.key)
        }
        for case .insert(_, let changes) in operations {
            for change in changes {
                switch change.value {
                case .attribute, .toOne(nil): continue
                case .toOne(let target?): guard isInserted(target) else { return false }
                case .toMany(let targets): guard targets.allSatisfy(isInserted) else { return false }
                }
            }
        }
        return true
    }

    /// The committed (or queued) rows of the objects a changeset needs to see, by identity; missing ones are deleted.
    private func currentRows(of references: [ObjectReference], _ queue: CommitQueue) -> [ObjectIdentity: Row] {
        state.withLock { state in
            var rows: [ObjectIdentity: Row] = [:]
            for reference in references {
                if let row = queue.row(entityIndex: Int(reference.entityIndex), key: reference.key, in: state) {
                    rows[reference.identity] = row
                }
            }
            return rows
        }
    }
}

/// The keys a changeset of inserts gives its new objects: a bitmap over their range when they are dense (new keys
/// are handed out in sequence, so a bulk save's are), else a set. A membership test of the bitmap is a shift and a
/// mask; the set hashed every key and every relationship target it was asked about.
struct InsertedKeys {
    private let low: UInt64
    private var words: [UInt64] = []
    private var sparse: Set<UInt64> = []
    private let isDense: Bool

    /// The keys of a changeset that only inserts objects of this store; `nil` when it does anything else, or nothing.
    init?(insertsOf operations: [ChangeOperation]) {
        var low = UInt64.max
        var high = UInt64.min
        for operation in operations {
            guard case .insert(let reference, _) = operation, reference.storeIndex == Store.ownStoreIndex else {
                return nil
            }
            low = min(low, reference.key)
            high = max(high, reference.key)
        }
        guard !operations.isEmpty else { return nil }
        self.init(operations, low: low, high: high)
    }

    /// The keys of the inserts among `operations`, which lie in `low...high`.
    init(_ operations: [ChangeOperation], low: UInt64, high: UInt64) {
        self.low = low
        // At most 2 words (128 keys' worth of bits) per key: the bitmap is never much larger than the set would be.
        isDense = (high - low) / 128 < UInt64(operations.count)
        if isDense {
            words = Array(repeating: 0, count: Int((high - low) / 64) + 1)
            for case .insert(let reference, _) in operations {
                let offset = reference.key - low
                words[Int(offset / 64)] |= 1 << (offset % 64)
            }
        } else {
            sparse.reserveCapacity(operations.count)
            for case .insert(let reference, _) in operations { sparse.insert(reference.key) }
        }
    }

    /// Whether one of the inserts has this key.
    @inline(__always)
    func contains(_ key: UInt64) -> Bool {
        guard isDense else { return sparse.contains(key) }
        guard key >= low else { return false }
        let offset = key - low
        let word = offset / 64
        guard word < UInt64(words.count) else { return false }
        return words[Int(word)] & (1 << (offset % 64)) != 0
    }

    /// Whether the keys are held in a bitmap (for tests).
    var isBitmap: Bool { isDense }
}

/// Which objects a changeset inserts, and which existing ones it changes or points at.
private struct ChangeFootprint {
    var inserted: Set<ObjectIdentity> = []
    /// The objects whose committed rows the conflict check reads: every changed object, then every target of a new
    /// relationship that the changeset does not insert itself.
    var lookups: [ObjectReference] = []

    init(_ operations: [ChangeOperation]) {
        inserted.reserveCapacity(operations.count)
        var referenced: Set<ObjectReference> = []
        for operation in operations {
            switch operation {
            case .insert(let reference, let changes):
                inserted.insert(reference.identity)
                for change in changes {
                    if case .attribute = change.value { continue }
                    referenced.formUnion(change.value.references)
                }
            case .update(let reference, let changes):
                lookups.append(reference)
                for change in changes { referenced.formUnion(change.value.references) }
            case .relate(let reference, _, let added, _):
                lookups.append(reference)
                referenced.formUnion(added)
            case .delete(let reference):
                lookups.append(reference)
            }
        }
        // A target in another store is not in this store's state (a coordinator of several stores checks it).
        lookups += referenced.filter { $0.storeIndex == Store.ownStoreIndex && !inserted.contains($0.identity) }
    }
}

/// The merge policy applied to one changeset, operation by operation, against the current rows; collects the
/// failures of the `error` policy and the slots that `storeWins` keeps.
private struct ConflictResolution {
    let model: ObjectModel
    let policy: MergePolicy
    let readRows: [ObjectIdentity: Row]
    let inserted: Set<ObjectIdentity>
    let current: [ObjectIdentity: Row]
    let objectID: (ObjectReference) -> ObjectID
    var failures: [EventGraphError.Failure] = []
    var pinned: Set<InverseRepair.Slot> = []

    init(
        model: ObjectModel, policy: MergePolicy, readRows: [ObjectIdentity: Row], inserted: Set<ObjectIdentity>,
        current: [ObjectIdentity: Row], objectID: @escaping (ObjectReference) -> ObjectID
    ) {
        self.model = model
        self.policy = policy
        self.readRows = readRows
        self.inserted = inserted
        self.current = current
        self.objectID = objectID
    }

    /// The operation as the policy lets it through, or `nil` when nothing of it is left.
    mutating func resolve(_ operation: ChangeOperation) -> ChangeOperation? {
        switch operation {
        case .insert(let reference, let changes): resolveInsert(reference, changes)
        case .update(let reference, let changes): resolveUpdate(reference, changes)
        case .relate(let reference, let index, let added, let removed): resolveRelate(reference, index, added, removed)
        case .delete(let reference): resolveDelete(reference)
        }
    }

    /// A new object keeps its attributes; relationships to objects deleted meanwhile are dropped (or fail).
    private mutating func resolveInsert(_ reference: ObjectReference, _ changes: [PropertyChange]) -> ChangeOperation {
        guard changes.contains(where: { if case .attribute = $0.value { false } else { true } }) else {
            return .insert(reference, changes)
        }
        return .insert(reference, keepingExistingTargets(changes, of: reference))
    }

    /// An update of an object changed or deleted meanwhile follows the policy.
    private mutating func resolveUpdate(_ reference: ObjectReference, _ changes: [PropertyChange]) -> ChangeOperation? {
        guard let now = current[reference.identity] else {
            failIfStrict(reference, nil, "was deleted in the store since this context read it")
            return nil
        }
        var changes = changes
        if let read = readRows[reference.identity], read.version != now.version {
            switch policy {
            case .error: failChanged(reference, read: read, now: now)
            case .storeWins: dropPropertiesChangedInStore(&changes, of: reference, read: read, now: now)
            case .objectWins: break
            }
        }
        changes = keepingExistingTargets(changes, of: reference)
        return changes.isEmpty ? nil : .update(reference, changes)
    }

    /// Additions to a to-many of an object deleted meanwhile are dropped (or fail); so are added targets deleted.
    private mutating func resolveRelate(
        _ reference: ObjectReference, _ index: UInt32, _ added: [ObjectReference], _ removed: [ObjectReference]
    ) -> ChangeOperation? {
        guard current[reference.identity] != nil else {
            failIfStrict(reference, nil, "was deleted in the store since this context read it")
            return nil
        }
        guard case .toMany(let kept) = keepingExistingTargets(.toMany(added), of: reference, index) else { return nil }
        guard !kept.isEmpty || !removed.isEmpty else { return nil }
        return .relate(reference, propertyIndex: index, added: kept, removed: removed)
    }

    /// A delete of an object deleted meanwhile does nothing; of one changed meanwhile, it fails under `error`.
    private mutating func resolveDelete(_ reference: ObjectReference) -> ChangeOperation? {
        guard let now = current[reference.identity] else {
            failIfStrict(reference, nil, "was already deleted in the store")
            return nil
        }
        if policy == .error, let read = readRows[reference.identity], read.version != now.version {
            failChanged(reference, read: read, now: now)
        }
        return .delete(reference)
    }

    /// Under `storeWins`, the properties the store changed since the context read the object keep the store's
    /// value; their relationship slots are pinned so that inverse repair keeps the store's side too.
    private mutating func dropPropertiesChangedInStore(
        _ changes: inout [PropertyChange], of reference: ObjectReference, read: Row, now: Row
    ) {
        let changedInStore = { (index: UInt32) in read.values[Int(index)] != now.values[Int(index)] }
        for change in changes where changedInStore(change.propertyIndex) {
            pinned.insert(InverseRepair.Slot(key: reference.key, property: Int(change.propertyIndex)))
        }
        changes.removeAll { changedInStore($0.propertyIndex) }
    }

    // MARK: - Targets

    /// Whether a target exists after the changeset; one in another store counts as existing here (this store's
    /// state cannot tell).
    private func exists(_ reference: ObjectReference) -> Bool {
        reference.storeIndex != Store.ownStoreIndex || inserted.contains(reference.identity)
            || current[reference.identity] != nil
    }

    private mutating func keepingExistingTargets(_ changes: [PropertyChange], of reference: ObjectReference)
        -> [PropertyChange]
    {
        changes.map {
            PropertyChange(
                propertyIndex: $0.propertyIndex,
                value: keepingExistingTargets($0.value, of: reference, $0.propertyIndex))
        }
    }

    /// A relationship value without the targets deleted meanwhile; under `error`, each such value fails.
    private mutating func keepingExistingTargets(_ value: PropertyValue, of reference: ObjectReference, _ index: UInt32)
        -> PropertyValue
    {
        let property = model.entities[Int(reference.entityIndex)].properties[Int(index)].name
        switch value {
        case .attribute:
            return value
        case .toOne(let target):
            guard let target, !exists(target) else { return value }
            failIfStrict(reference, property, "refers to \(objectID(target)), which was deleted in the store")
            return .toOne(nil)
        case .toMany(let targets):
            let missing = targets.filter { !exists($0) }
            guard !missing.isEmpty else { return value }
            failIfStrict(
                reference, property,
                "refers to \(missing.count) object(s) deleted in the store, such as \(objectID(missing[0]))")
            return .toMany(targets.filter(exists))
        }
    }

    // MARK: - Failures

    private mutating func failChanged(_ reference: ObjectReference, read: Row, now: Row) {
        fail(
            reference, nil,
            "was changed in the store (transaction \(now.version)) since this context read it (transaction "
                + "\(read.version))")
    }

    /// Records a failure when the policy is `error`; the other policies drop what cannot be kept.
    private mutating func failIfStrict(_ reference: ObjectReference, _ property: String?, _ message: String) {
        if policy == .error { fail(reference, property, message) }
    }

    private mutating func fail(_ reference: ObjectReference, _ property: String?, _ message: String) {
        failures.append(
            EventGraphError.Failure(
                entityName: model.entities[Int(reference.entityIndex)].name, objectID: objectID(reference),
                propertyName: property, message: message))
    }
}
