import Foundation
import LogFormat

/// The object store beneath a child context: its parent context's unsaved changes over the parent's own object
/// store.
///
/// Reads see what the parent sees — its unsaved inserts, updates and deletes — without registering anything in the
/// parent, so a child that is dropped or rolled back leaves the parent as it was. ``commit(_:)`` moves a child's
/// changes into the parent as the parent's own unsaved changes; nothing reaches a log until a root context saves.
/// Identities are reserved beneath the root, so the identity a child gives an inserted object is the one the root's
/// save makes permanent.
///
/// `@unchecked Sendable`: the parent is a context, which is not `Sendable`. This store is made only by
/// ``ObjectContext/makeChildContext(name:)`` and reachable only through the child it returns, and that result is
/// not `sending`: region-based isolation keeps the child, and so this store, in the parent's region. Every call
/// therefore runs in the parent's isolation domain, one at a time, as the parent's own calls do.
final class ParentContextStore: ObjectStore, @unchecked Sendable {
    /// The context the child reads through and pushes into.
    let parent: ObjectContext

    init(parent: ObjectContext) {
        self.parent = parent
    }

    /// The object store beneath the parent.
    var base: any ObjectStore { parent.parentStore }

    var model: ObjectModel { base.model }
    var storeUUIDs: [UUID] { base.storeUUIDs }
    var isReadOnly: Bool { base.isReadOnly }
    var lastTransactionID: UInt64 { base.lastTransactionID }

    func isUncommitted(_ identity: ObjectIdentity) -> Bool {
        parent.registered[identity]?.flags.contains(.isInserted) == true || base.isUncommitted(identity)
    }

    // MARK: Reading

    /// For a fault and a lookup by ID, which cannot throw: a checkpoint chunk that may hold the object and cannot be
    /// loaded ends the process, as it does for a store (see ``Store/committedRow(entityIndex:key:)``).
    func row(of identity: ObjectIdentity, entityIndex: Int) -> Row? {
        do {
            return try lookUpCommittedRow(of: identity, entityIndex: entityIndex)?.row
        } catch {
            Store.failLookUp(key: identity.key, error)
        }
    }

    func row(of identity: ObjectIdentity, in entityIndices: [Int]) -> Row? {
        do {
            return try lookUpCommittedRow(of: identity, in: entityIndices)?.row
        } catch {
            Store.failLookUp(key: identity.key, error)
        }
    }

    func lookUpCommittedRow(of identity: ObjectIdentity, entityIndex: Int) throws(EventGraphError) -> CommittedRow? {
        try pinningParentValues(of: parent.registered[identity]) { () throws(EventGraphError) in
            try lookUpCommittedRow(of: identity, entityIndex: entityIndex) {
                identity, entityIndex throws(EventGraphError) in
                try base.lookUpCommittedRow(of: identity, entityIndex: entityIndex)
            }
        }
    }

    /// ``lookUpCommittedRow(of:entityIndex:)`` with the lookups beneath the parent made by `lookUpBeneath`.
    private func lookUpCommittedRow<Failure: Error>(
        of identity: ObjectIdentity, entityIndex: Int,
        beneath lookUpBeneath: (ObjectIdentity, Int) throws(Failure) -> CommittedRow?
    ) throws(Failure) -> CommittedRow? {
        let overlay = try parentRow(of: identity) { object throws(Failure) in
            try lookUpBeneath(identity, object.entity.index) != nil
        }
        if let overlay {
            guard let row = overlay, row.entityIndex == entityIndex else { return nil }
            return CommittedRow(row)
        }
        return try lookUpBeneath(identity, entityIndex)
    }

    func lookUpCommittedRow(of identity: ObjectIdentity, in entityIndices: [Int]) throws(EventGraphError)
        -> CommittedRow?
    {
        if let overlay = try parentRow(of: identity) {
            guard let row = overlay, entityIndices.contains(row.entityIndex) else { return nil }
            return CommittedRow(row)
        }
        return try base.lookUpCommittedRow(of: identity, in: entityIndices)
    }

    func rows(of entityIndex: Int) throws(EventGraphError) -> [StoreRows] {
        let batches = try base.rows(of: entityIndex)
        let changed = parentChanges(of: [entityIndex])
        guard !changed.isEmpty else { return batches }
        var overlay: [ObjectIdentity: Row?] = [:]
        for object in changed {
            if let row = try parentRow(of: object.identity) { overlay[object.identity] = row }
        }
        var result: [(storeIndex: UInt32, rows: [Row?])] = []
        for batch in batches {
            let rows = try batch.rows().map { row -> Row? in
                guard let row else { return nil }
                return overlay.removeValue(forKey: row.identity(inStore: batch.storeIndex)) ?? row
            }
            result.append((batch.storeIndex, rows))
        }
        // What is left are the parent's inserts, which the store beneath does not hold.
        for object in changed {
            guard case let row?? = overlay[object.identity] else { continue }
            let identity = object.identity
            if let position = result.firstIndex(where: { $0.storeIndex == identity.storeIndex }) {
                result[position].rows.append(row)
            } else {
                result.append((identity.storeIndex, [row]))
            }
        }
        return result.map { StoreRows(storeIndex: $0.storeIndex, rows: $0.rows) }
    }

    func rowCount(of entityIndices: [Int]) throws(EventGraphError) -> Int {
        var count = try base.rowCount(of: entityIndices)
        for object in parentChanges(of: Set(entityIndices)) {
            let isGone = object.flags.contains(.isDeleted) || object.flags.contains(.isDead)
            if object.flags.contains(.isInserted) {
                if !isGone { count += 1 }
            } else if isGone, try base.lookUpCommittedRow(of: object.identity, entityIndex: object.entity.index) != nil
            {
                count -= 1
            }
        }
        return count
    }

    func indexedRows(
        entityIndex: Int, ranges: [(propertyIndex: Int, range: IndexRange)], including extra: [ObjectIdentity]
    ) throws(EventGraphError) -> [StoreRows]? {
        // The index beneath lacks the parent's unsaved values: a scan (with the overlay) answers instead.
        guard parentChanges(of: [entityIndex]).isEmpty else { return nil }
        return try base.indexedRows(entityIndex: entityIndex, ranges: ranges, including: extra)
    }

    func identity(holding tuple: UniqueKey) throws(EventGraphError) -> ObjectIdentity? {
        let entity = model.entities[tuple.entityIndex]
        guard let constraint = entity.uniqueConstraints.first(where: { $0.ordinal == tuple.ordinal }) else {
            return try base.identity(holding: tuple)
        }
        // Only the constraint's values are read: a worker's find-or-create asks this once per object it imports.
        let wanted = tuple.values
        for object in parentChanges(of: Set(entity.familyIndices)) {
            if object.flags.contains(.isDeleted) || object.flags.contains(.isDead) { continue }
            guard object.flags.contains(.isInserted) || object.hasPersistentChanges else { continue }
            let holds = try pinningParentValues(of: object) {
                zip(constraint.propertyIndices, wanted).allSatisfy { index, value in
                    (object.currentValue(at: index) ?? object.entity.defaultValues[index]) == .attribute(value)
                }
            }
            if holds { return object.identity }
        }
        guard let holder = try base.identity(holding: tuple) else { return nil }
        // A holder the parent changed or deleted no longer holds the tuple, or the loop above found it.
        return try parentRow(of: holder) == nil ? holder : nil
    }

    func readBlob(_ reference: BlobReference, inStore storeIndex: UInt32) throws(EventGraphError) -> [UInt8]? {
        try base.readBlob(reference, inStore: storeIndex)
    }

    // MARK: Writing

    func reserveIdentity(for entity: EntityDescription) -> ObjectIdentity {
        base.reserveIdentity(for: entity)
    }

    func commit(_ request: CommitRequest) throws(EventGraphError) -> CommitResult {
        guard !isReadOnly else { throw EventGraphError(.readOnly, "the store is read-only (an as-of view)") }
        let kept = try resolveConflicts(request)
        // Every lookup beneath the push needs is made before anything is applied: one that fails (a checkpoint chunk
        // that cannot be loaded) fails the push with the parent as it was.
        let beneath = try lookUpBeneath(request, keeping: kept)
        defer { beneath.unpin() }
        // The parent's own changes are reported apart from the push, which is reported as the parent's change.
        parent.reportPendingChanges(.processed)
        var touched: [ObjectIdentity: ObjectReference] = [:]
        for operation in request.operations {
            apply(operation, request: request, keeping: kept, beneath: beneath, touched: &touched)
        }
        parent.childSaveCount &+= 1
        parent.reportPendingChanges(.pushedByChild, pushedBy: ObjectIdentifier(self))
        // No row for an insert: the parent holds exactly the child's values, so the child builds the row from its
        // own object (``row(overlaying:)``) without a lookup here.
        let rows = touched.map { identity, reference in
            let row = lookUpCommittedRow(of: identity, entityIndex: Int(reference.entityIndex)) { identity, _ in
                beneath.rows[identity] ?? nil
            }
            return (identity: identity, row: row?.row)
        }
        return CommitResult(transactionID: base.lastTransactionID, rows: rows, permanentIdentities: [:])
    }

    // MARK: The parent's view

    /// The parent's row of an object it changed: `.some(nil)` when it deleted the object, `nil` when it changed
    /// nothing (the store beneath answers).
    ///
    /// - Throws: the error of a checkpoint chunk that may hold the object beneath and cannot be loaded.
    func parentRow(of identity: ObjectIdentity) throws(EventGraphError) -> Row?? {
        try pinningParentValues(of: parent.registered[identity]) { () throws(EventGraphError) in
            try parentRow(of: identity) { object throws(EventGraphError) in
                try base.lookUpCommittedRow(of: identity, entityIndex: object.entity.index) != nil
            }
        }
    }

    /// Runs `body`, which reads the committed values of the parent's `object`, with the checkpoint chunk they read
    /// from pinned (``LazyColumnChunk/pin()``), if they read one: a value read cannot throw, and the chunk need not
    /// be the one a lookup beneath loads (a commit may have changed that chunk since the parent read the object, and
    /// the chunk it read may be evicted and unreadable by now).
    ///
    /// - Throws: the chunk's error when it cannot be loaded (before `body` runs), or what `body` throws.
    private func pinningParentValues<R>(
        of object: ManagedObject?, _ body: () throws(EventGraphError) -> R
    ) throws(EventGraphError) -> R {
        guard let box = object?.committed?.checkpointChunk else { return try body() }
        try box.pin()
        defer { box.unpin() }
        return try body()
    }

    /// ``parentRow(of:)`` with the lookup beneath made by `isCommittedBeneath`, which is asked only about an object
    /// the parent changed and did not insert.
    func parentRow<Failure: Error>(
        of identity: ObjectIdentity, isCommittedBeneath: (ManagedObject) throws(Failure) -> Bool
    ) throws(Failure) -> Row?? {
        guard let object = parent.registered[identity] else { return nil }
        if object.flags.contains(.isDeleted) || object.flags.contains(.isDead) { return .some(nil) }
        guard object.flags.contains(.isInserted) || object.hasPersistentChanges else { return nil }
        // An object deleted beneath (by another context's save) is gone for the parent's fetches too, unsaved
        // changes or not; so it is for the child.
        if !object.flags.contains(.isInserted), try !isCommittedBeneath(object) { return .some(nil) }
        return .some(Self.row(overlaying: object))
    }

    /// An object's current persistent values as a row: its unsaved values over its committed ones (over the
    /// entity's defaults for an inserted object), transient properties at their defaults, with the version of the
    /// row it read. What a parent serves its children, and what a child's inserted object holds once pushed.
    static func row(overlaying object: ManagedObject) -> Row {
        let entity = object.entity
        if object.flags.contains(.isFault) { object.fireFault() }
        var values = entity.defaultValues
        if let committed = object.committed {
            for index in values.indices where entity.isPersistentProperty[index] {
                values[index] = committed.value(at: index)
            }
        }
        for entry in object.pending where entity.isPersistentProperty[entry.index] {
            values[entry.index] = entry.value
        }
        return Row(
            entityIndex: entity.index, key: object.identity.key, version: object.committed?.version ?? 0, values: values
        )
    }

    /// The parent's inserted, updated and deleted objects of some entities.
    private func parentChanges(of entityIndices: Set<Int>) -> [ManagedObject] {
        guard parent.hasChanges else { return [] }
        var seen: Set<ObjectIdentity> = []
        return (parent.insertedList + parent.changedList + parent.deletedList).filter {
            entityIndices.contains($0.entity.index) && seen.insert($0.identity).inserted
        }
    }
}
