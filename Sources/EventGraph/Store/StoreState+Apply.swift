import LogFormat

/// How the changeset applier treats an operation that does not fit the state (an update of an object that does
/// not exist, a property the entity lacks, a transaction ID that does not increase …).
enum ReplayPolicy: Sendable {
    /// The library's read-write open, its views and its commits: the operation is an error that names the
    /// transaction and the object (the replayer adds the file).
    case strict
    /// The tools (`egctl replay`, `verify`, `dump`, …): the operation is skipped and described in the anomalies,
    /// which the tools report.
    case tolerant
}

extension StoreState {
    /// Computes the rows a changeset produces without changing the state; an operation that does not fit is an
    /// error (the strict policy, as every commit uses).
    ///
    /// - Parameters:
    ///   - overlay: the saves queued before this one and not yet installed, whose rows take precedence.
    ///   - insertDefaults: per entity, the values of properties an insert leaves out (replay passes those of the
    ///     schema frame in force); `nil` takes the model's defaults.
    func stage(
        _ changeset: Changeset, model: ObjectModel, overlay: CommitQueue? = nil,
        insertDefaults: [[PropertyValue]]? = nil
    ) throws(EventGraphError) -> StagedChanges {
        var ignored: [String] = []
        return try stage(
            changeset, model: model, overlay: overlay, insertDefaults: insertDefaults, policy: .strict,
            anomalies: &ignored)
    }

    /// Computes the rows a changeset produces without changing the state.
    ///
    /// - Parameter anomalies: under the tolerant policy, receives a sentence for each operation that was skipped
    ///   because it does not fit the state.
    func stage(
        _ changeset: Changeset, model: ObjectModel, overlay: CommitQueue? = nil,
        insertDefaults: [[PropertyValue]]?, policy: ReplayPolicy, anomalies: inout [String]
    ) throws(EventGraphError) -> StagedChanges {
        func row(entityIndex: Int, key: UInt64) -> Row? {
            if let overlay { return overlay.row(entityIndex: entityIndex, key: key, in: self) }
            return self.row(entityIndex: entityIndex, key: key)
        }
        var staged = StagedChanges()
        staged.reserveCapacity(changeset.operations.count)
        let version = changeset.transactionID
        let check = OperationCheck(version: version, model: model, entityCount: tables.count, policy: policy)
        func reject(_ sentence: String) throws(EventGraphError) { try check.reject(sentence, &anomalies) }
        func name(_ reference: ObjectReference) -> String { check.name(reference) }
        func ownEntity(of reference: ObjectReference, _ verb: String) throws(EventGraphError) -> Int? {
            try check.ownEntity(of: reference, verb, &anomalies)
        }
        func current(_ reference: ObjectReference, _ verb: String) throws(EventGraphError) -> Row? {
            guard let entityIndex = try ownEntity(of: reference, verb) else { return nil }
            if let entry = staged[reference.key] {
                guard let row = entry.row else {
                    try reject("\(verb) \(name(reference)) after deleting it")
                    return nil
                }
                return row
            }
            guard let row = row(entityIndex: entityIndex, key: reference.key) else {
                try reject("\(verb) \(name(reference)), which does not exist")
                return nil
            }
            return row
        }
        func put(_ key: UInt64, _ entityIndex: Int, _ row: Row?) {
            staged.put(key: key, entityIndex: entityIndex, row: row)
        }
        func apply(_ changes: [PropertyChange], to values: inout [PropertyValue], of reference: ObjectReference)
            throws(EventGraphError)
        {
            try check.apply(changes, to: &values, of: reference, &anomalies)
        }
        for operation in changeset.operations {
            switch operation {
            case .insert(let reference, let changes):
                guard let entityIndex = try ownEntity(of: reference, "inserts") else { continue }
                if staged[reference.key]?.row != nil || row(entityIndex: entityIndex, key: reference.key) != nil {
                    // Tolerated, the insert replaces the object: the log's latest word on it.
                    try reject("inserts \(name(reference)), which exists")
                }
                var values = insertDefaults?[entityIndex] ?? model.entities[entityIndex].defaultValues
                try apply(changes, to: &values, of: reference)
                put(
                    reference.key, entityIndex,
                    Row(entityIndex: entityIndex, key: reference.key, version: version, values: values))
            case .update(let reference, let changes):
                guard let base = try current(reference, "updates") else { continue }
                var values = base.values.array
                try apply(changes, to: &values, of: reference)
                put(
                    reference.key, base.entityIndex,
                    Row(entityIndex: base.entityIndex, key: reference.key, version: version, values: values))
            case .relate(let reference, let propertyIndex, let added, let removed):
                guard let base = try current(reference, "relates") else { continue }
                var values = base.values.array
                guard Int(propertyIndex) < values.count, case .toMany(var targets) = values[Int(propertyIndex)] else {
                    try reject("relates \(name(reference)) through property #\(propertyIndex), which is not to-many")
                    continue
                }
                Self.relate(&targets, added: added, removed: removed)
                values[Int(propertyIndex)] = .toMany(targets)
                // A relate changes only a to-many list; the version still moves so readers see a new row.
                put(
                    reference.key, base.entityIndex,
                    Row(entityIndex: base.entityIndex, key: reference.key, version: version, values: values))
            case .delete(let reference):
                guard let base = try current(reference, "deletes") else { continue }
                put(reference.key, base.entityIndex, nil)
            }
        }
        return staged
    }

    /// Applies a changeset read from a log: checks that its ID follows the last one, re-expresses its foreign
    /// references in the state's table, applies its operations to the columns in place (or, for the few
    /// transactions that need it, stages and installs it), and advances the counters.
    ///
    /// Transaction IDs must increase but may have gaps (a salvaged log lacks the transactions it lost; see
    /// `Docs/FileFormat.md` §3.4). Returns the IDs missing before this one, if any.
    ///
    /// - Parameter inPlace: `false` stages every operation and installs the rows, as a commit does (for tests that
    ///   compare the two ways; the state they build is the same).
    @discardableResult
    mutating func replay(
        _ changeset: Changeset, blobHandles handles: [UInt64], model: ObjectModel, insertDefaults: [[PropertyValue]],
        policy: ReplayPolicy, anomalies: inout [String], inPlace: Bool = true
    ) throws(EventGraphError) -> ClosedRange<UInt64>? {
        try replay(
            ReplayChangeset(changeset), blobHandles: handles, model: model, insertDefaults: insertDefaults,
            policy: policy, anomalies: &anomalies, inPlace: inPlace)
    }

    /// ``replay(_:blobHandles:model:insertDefaults:policy:anomalies:inPlace:)-(Changeset,_,_,_,_,_,_)`` of a
    /// changeset decoded flat from the log: its values go from the payload's bytes into the columns.
    @discardableResult
    mutating func replay(
        _ changeset: ReplayChangeset, blobHandles handles: [UInt64], model: ObjectModel,
        insertDefaults: [[PropertyValue]], policy: ReplayPolicy, anomalies: inout [String], inPlace: Bool = true
    ) throws(EventGraphError) -> ClosedRange<UInt64>? {
        let id = changeset.transactionID
        var gap: ClosedRange<UInt64>?
        // Both IDs come from the log: compare without adding (the last one may be the largest ID).
        if id <= lastTransactionID {
            let message = "transaction \(id) follows transaction \(lastTransactionID); IDs must increase"
            guard policy == .tolerant else { throw EventGraphError(.log, message) }
            anomalies.append(message)
        } else if id - lastTransactionID > 1 {
            gap = (lastTransactionID + 1)...(id - 1)
        }
        let localized = localize(changeset)
        var applied = false
        if inPlace {
            applied = try applyInPlace(
                localized, model: model, insertDefaults: insertDefaults, policy: policy, anomalies: &anomalies)
        }
        if !applied {
            let staged = try stage(
                localized.changeset, model: model, insertDefaults: insertDefaults, policy: policy,
                anomalies: &anomalies)
            install(staged, model: model)
        }
        for (index, handle) in handles.enumerated() {
            blobHandles[BlobKey(transactionID: id, index: UInt32(index))] = handle
        }
        lastTransactionID = max(lastTransactionID, id)
        lastCommitTimeMicroseconds = changeset.header.commitTimeMicroseconds
        nextKey = max(nextKey, changeset.header.nextKey)
        advanceSequences(changeset.sequenceReservations)
        return gap
    }

    /// Edits a to-many list as a relate says: the removed targets go, then the added ones that are not in it yet
    /// are appended. Targets are told apart by store and key: a list may hold objects of several stores, whose keys
    /// repeat.
    ///
    /// - Parameter keyBound: a key no target's key exceeds, when the caller knows one (a long list's column keeps
    ///   it), so that the list is not scanned for its largest key.
    /// - Returns: a key no target's key exceeds after the edit (`nil`: not known, when none was given and nothing
    ///   was added).
    @discardableResult
    static func relate(
        _ targets: inout [ObjectReference], added: [ObjectReference], removed: [ObjectReference],
        keyBound: UInt64? = nil
    ) -> UInt64? {
        if removed.count > 4 {
            let removedTargets = Set(removed.map(\.identity))
            targets.removeAll { removedTargets.contains($0.identity) }
        } else if !removed.isEmpty {
            // A few removals (the usual relate) compare each target with them, hashing none of a long list.
            let removedTargets = removed.map(\.identity)
            targets.removeAll { removedTargets.contains($0.identity) }
        }
        // Removing targets leaves a bound a bound.
        guard !added.isEmpty else { return keyBound }
        let largestKey = keyBound ?? targets.reduce(0) { Swift.max($0, $1.key) }
        // Objects inserted since the list was last written have larger keys than any in it, so the usual relate is
        // checked against the largest key instead of hashing a list of, say, 100k posts.
        var bound = largestKey
        if added.count <= 16, added.allSatisfy({ $0.key > largestKey }) {
            // The usual relate (a post added to a tag's list): none is in the list, and the few added are told apart
            // from those appended before them by comparison, without building a set (a Hasher per relate).
            let start = targets.count
            for target in added where !targets[start...].contains(where: { $0.identity == target.identity }) {
                targets.append(target)
                bound = Swift.max(bound, target.key)
            }
            return bound
        }
        let allNew = added.allSatisfy { $0.key > largestKey }
        if allNew, Self.keysIncrease(added) {
            // The usual relate of many (an author's list taking a transaction's 100 new posts): none is in the list,
            // and keys that increase are all different, so every one is appended without a set.
            targets.append(contentsOf: added)
            return Swift.max(bound, added[added.count - 1].key)
        }
        var present: Set<ObjectIdentity>
        if allNew {
            present = []
            present.reserveCapacity(added.count)
        } else {
            present = Set(minimumCapacity: targets.count + added.count)
            for target in targets { present.insert(target.identity) }
        }
        for target in added where present.insert(target.identity).inserted {
            targets.append(target)
            bound = Swift.max(bound, target.key)
        }
        return bound
    }

    /// Whether each reference's key is larger than the one before it (then no two are the same object).
    private static func keysIncrease(_ references: [ObjectReference]) -> Bool {
        var previous: UInt64?
        for reference in references {
            if let previous, reference.key <= previous { return false }
            previous = reference.key
        }
        return true
    }
}

/// What staging and in-place replay check of each operation, and how they refuse one: an error naming the
/// transaction and the object (strict) or a sentence in the anomalies (tolerant).
struct OperationCheck {
    let version: UInt64
    let model: ObjectModel
    let entityCount: Int
    let policy: ReplayPolicy

    /// Refuses an operation (strict) or records it as skipped (tolerant).
    func reject(_ sentence: String, _ anomalies: inout [String]) throws(EventGraphError) {
        let message = "transaction \(version) \(sentence)"
        guard policy == .tolerant else { throw EventGraphError(.log, message) }
        anomalies.append(message)
    }

    func name(_ reference: ObjectReference) -> String {
        let entityIndex = Int(reference.entityIndex)
        let entity = entityIndex < model.entities.count ? model.entities[entityIndex].name : "#\(entityIndex)"
        return reference.storeIndex == 0
            ? "\(entity) \(reference.key)" : "\(entity) \(reference.key) of foreign store #\(reference.storeIndex)"
    }

    /// The entity of an operation's own object, when the model has it and the object is in this store.
    func ownEntity(of reference: ObjectReference, _ verb: String, _ anomalies: inout [String])
        throws(EventGraphError) -> Int?
    {
        let entityIndex = Int(reference.entityIndex)
        guard entityIndex < entityCount else {
            try reject("\(verb) \(name(reference)), but the model has no entity #\(entityIndex)", &anomalies)
            return nil
        }
        guard reference.storeIndex == 0 else {
            try reject("\(verb) \(name(reference)), which another store holds", &anomalies)
            return nil
        }
        return entityIndex
    }

    /// Writes an operation's property values into a row's values.
    func apply(
        _ changes: [PropertyChange], to values: inout [PropertyValue], of reference: ObjectReference,
        _ anomalies: inout [String]
    ) throws(EventGraphError) {
        for change in changes {
            guard change.propertyIndex < values.count else {
                try rejectMissingProperty(change.propertyIndex, of: reference, &anomalies)
                continue
            }
            values[Int(change.propertyIndex)] = change.value
        }
    }

    /// Refuses a value of a property the object's entity lacks.
    func rejectMissingProperty(_ propertyIndex: UInt32, of reference: ObjectReference, _ anomalies: inout [String])
        throws(EventGraphError)
    {
        try reject("sets property #\(propertyIndex) of \(name(reference)), which its entity lacks", &anomalies)
    }
}
