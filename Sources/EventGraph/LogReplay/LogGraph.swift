package import LogFormat

/// The object graph a log describes, rebuilt from its payloads alone — no model classes needed.
///
/// Tools (`egctl`) use it to replay, dump, verify and compact any store: it applies changesets and checkpoints
/// literally, keeps the latest value of every recorded property of every live object, and can hand the live state
/// back as checkpoint records or as a ``StateDigest``.
package struct LogGraph: Sendable {
    /// One recorded property value. Unordered to-many targets beyond ``setThreshold`` are kept as a set, so that
    /// adding or removing one costs O(1) however many there are (a tag can have hundreds of thousands of posts);
    /// smaller ones stay arrays, which cost one allocation instead of a hash table.
    enum Slot: Sendable {
        case value(PropertyValue)
        case targets(Set<ObjectReference>)

        /// Unordered to-many relationships with more targets than this are kept as sets.
        static let setThreshold = 32

        /// Adds and removes to-many targets in place.
        mutating func relate(added: [ObjectReference], removed: [ObjectReference], isOrdered: Bool) {
            switch self {
            case .targets(var set):
                self = .value(.toOne(nil))  // release self's reference so `set` is unique
                for target in removed { set.remove(target) }
                for target in added { set.insert(target) }
                self = .targets(set)
            case .value(.toMany(var list)):  // ordered: keep positions
                self = .value(.toOne(nil))
                if !removed.isEmpty {
                    let removedSet = Set(removed)
                    list.removeAll { removedSet.contains($0) }
                }
                for target in added where !list.contains(target) { list.append(target) }
                self = !isOrdered && list.count > Self.setThreshold ? .targets(Set(list)) : .value(.toMany(list))
            case .value:
                self = .targets(Set(added))
            }
        }

        var propertyValue: PropertyValue {
            switch self {
            case .value(let value): value
            case .targets(let set): .toMany(set.sorted())
            }
        }
    }

    /// The live objects: for each, its recorded property values by property index (nil: not recorded).
    var objects: [ObjectReference: [Slot?]] = [:]

    /// Every live object, in no particular order.
    package var objectReferences: [ObjectReference] { Array(objects.keys) }

    /// The number of live objects.
    package var objectCount: Int { objects.count }

    /// Whether `object` is live.
    package func contains(_ object: ObjectReference) -> Bool { objects[object] != nil }
    /// Stores named by references with a store index above 0, by the UUID that owns them in this graph.
    package private(set) var foreignStores: [LogUUID] = []
    /// The schema in force (the last schema record seen).
    package private(set) var catalog: SchemaCatalog?
    /// The last transaction applied, and its commit time (µs since 1970).
    package private(set) var lastTransactionID: UInt64 = 0
    package private(set) var lastCommitTimeMicroseconds: Int64 = 0
    /// The next object key the store allocates.
    package private(set) var nextKey: UInt64 = 1
    /// Operations that did not fit the state (an update of an object that does not exist, …), in order.
    package private(set) var anomalies: [String] = []
    /// Where externally stored values are in the file, by their logical reference.
    package private(set) var blobLocations: [BlobKey: BlobLocation] = [:]

    /// A blob's logical identity.
    package struct BlobKey: Hashable, Sendable {
        /// The transaction whose blob frames hold the bytes.
        package var transactionID: UInt64
        /// The blob's position among that transaction's blobs.
        package var index: UInt32
    }

    /// An empty graph; feed it records with ``apply(_:)-(LogRecord)``.
    package init() {}

    /// Applies one record read from a log. Returns the decoded changeset for transactions (callers print it).
    @discardableResult
    package mutating func apply(_ record: LogRecord) throws -> Changeset? {
        switch record {
        case .schema(let schema, _):
            let next = SchemaCatalog(schema)
            if let previous = catalog { keepDefaults(of: previous, changingTo: next) }
            catalog = next
        case .transaction(let transaction):
            let changeset = try transaction.changeset()
            apply(changeset, blobs: transaction.blobs)
            return changeset
        case .checkpointBegin(let begin, _):
            objects.removeAll(keepingCapacity: true)
            foreignStores = []
            blobLocations = [:]
            lastTransactionID = begin.lastTransactionID
            lastCommitTimeMicroseconds = begin.lastCommitTimeMicroseconds
            nextKey = begin.nextKey
        case .checkpointChunk(let chunk, _):
            for record in chunk.records {
                let object = localize(record.object, chunk.foreignStores)
                objects[object] = row(
                    for: object, record.properties.map { ($0.propertyIndex, $0.value) },
                    foreign: chunk.foreignStores)
            }
        case .checkpointBlob(let location):
            blobLocations[BlobKey(transactionID: location.transactionID, index: location.index)] = location
        case .checkpointEnd(let end, let offset):
            if end.objectCount != UInt64(objects.count) {
                anomalies.append(
                    "checkpoint ending at byte offset \(offset) declares \(end.objectCount) objects but holds "
                        + "\(objects.count)")
            }
        case .dictionary, .seal, .extensionFrame:
            break
        }
        return nil
    }

    /// Applies a decoded changeset whose blob frames are at `blobs` (callers that decoded the transaction
    /// themselves use this instead of ``apply(_:)-(LogRecord)`` to decode it once).
    package mutating func apply(_ changeset: Changeset, blobs: [BlobLocation]) {
        for blob in blobs { blobLocations[BlobKey(transactionID: blob.transactionID, index: blob.index)] = blob }
        apply(changeset)
    }

    /// Applies a decoded changeset.
    package mutating func apply(_ changeset: Changeset) {
        let foreign = changeset.foreignStores
        for operation in changeset.operations {
            switch operation {
            case .insert(let reference, let changes):
                let object = localize(reference, foreign)
                if objects[object] != nil {
                    anomalies.append("transaction \(changeset.transactionID) inserts \(describe(object)), which exists")
                }
                objects[object] = row(for: object, changes.map { ($0.propertyIndex, $0.value) }, foreign: foreign)
            case .update(let reference, let changes):
                let object = localize(reference, foreign)
                guard var values = objects[object] else {
                    anomalies.append("transaction \(changeset.transactionID) updates missing \(describe(object))")
                    continue
                }
                objects[object] = nil  // keep the row uniquely referenced while it is edited
                for change in changes {
                    let index = Int(change.propertyIndex)
                    if index >= values.count { values += repeatElement(nil, count: index + 1 - values.count) }
                    values[index] = slot(localize(change.value, foreign), object: object, property: index)
                }
                objects[object] = values
            case .relate(let reference, let property, let added, let removed):
                let object = localize(reference, foreign)
                guard var values = objects[object] else {
                    anomalies.append("transaction \(changeset.transactionID) relates missing \(describe(object))")
                    continue
                }
                objects[object] = nil
                let index = Int(property)
                if index >= values.count { values += repeatElement(nil, count: index + 1 - values.count) }
                let added = added.map { localize($0, foreign) }
                let removed = removed.map { localize($0, foreign) }
                var current = values[index] ?? slot(.toMany([]), object: object, property: index)
                values[index] = nil  // the slot's storage is now referenced once, so edits happen in place
                current.relate(added: added, removed: removed, isOrdered: isOrdered(object, index))
                values[index] = current
                objects[object] = values
            case .delete(let reference):
                let object = localize(reference, foreign)
                if objects.removeValue(forKey: object) == nil {
                    anomalies.append("transaction \(changeset.transactionID) deletes missing \(describe(object))")
                }
            }
        }
        lastTransactionID = changeset.transactionID
        lastCommitTimeMicroseconds = changeset.commitTimeMicroseconds
        nextKey = max(nextKey, changeset.nextKey)
    }

    /// The value of a property of a live object, its default when the object does not record it.
    package func value(of object: ObjectReference, property: Int) -> PropertyValue? {
        guard let values = objects[object],
            let schema = catalog?.property(UInt32(property), ofEntity: object.entityIndex)
        else { return nil }
        return (property < values.count ? values[property]?.propertyValue : nil)
            ?? SchemaCatalog.defaultValue(of: schema)
    }

    /// Whether `object`'s to-many or to-one relationship at `property` includes `target`, in O(1) for sets.
    func relationship(of object: ObjectReference, property: Int, contains target: ObjectReference) -> Bool {
        guard let values = objects[object], property < values.count, let slot = values[property] else { return false }
        switch slot {
        case .targets(let set): return set.contains(target)
        case .value(.toMany(let list)): return list.contains(target)
        case .value(.toOne(let one)): return one == target
        case .value(.attribute): return false
        }
    }

    /// The UUID of the store a reference points into (nil for this store).
    ///
    /// An operation's own object reference is not localized, so a crafted changeset can leave an index that this
    /// graph's table does not hold (found by the `open` fuzzer); such a reference reads as this store's rather than
    /// trapping. The one replay engine of issue 10 is to reject it as damage instead.
    package func storeUUID(of reference: ObjectReference) -> LogUUID? {
        let index = Int(reference.storeIndex)
        guard index > 0, index <= foreignStores.count else { return nil }
        return foreignStores[index - 1]
    }

    /// "Post #42" — an object's entity name and key.
    package func describe(_ object: ObjectReference) -> String {
        let name = catalog?.entityName(object.entityIndex) ?? "#\(object.entityIndex)"
        if let store = storeUUID(of: object) { return "\(name) #\(object.key) in store \(store)" }
        return "\(name) #\(object.key)"
    }

    // MARK: - Foreign stores

    /// Re-expresses a reference's store index in this graph's own foreign-store table.
    private mutating func localize(_ reference: ObjectReference, _ foreign: [LogUUID]) -> ObjectReference {
        guard reference.storeIndex > 0, Int(reference.storeIndex) <= foreign.count else { return reference }
        let uuid = foreign[Int(reference.storeIndex) - 1]
        var local = reference
        if let existing = foreignStores.firstIndex(of: uuid) {
            local.storeIndex = UInt32(existing + 1)
        } else {
            foreignStores.append(uuid)
            local.storeIndex = UInt32(foreignStores.count)
        }
        return local
    }

    private mutating func localize(_ value: PropertyValue, _ foreign: [LogUUID]) -> PropertyValue {
        guard !foreign.isEmpty else { return value }
        switch value {
        case .attribute: return value
        case .toOne(let target): return .toOne(target.map { localize($0, foreign) })
        case .toMany(let targets): return .toMany(targets.map { localize($0, foreign) })
        }
    }

    private mutating func row(
        for object: ObjectReference, _ changes: [(UInt32, PropertyValue)], foreign: [LogUUID]
    ) -> [Slot?] {
        let count = max(
            catalog?.entity(at: object.entityIndex)?.properties.count ?? 0,
            (changes.map { Int($0.0) }.max() ?? -1) + 1)
        var values = [Slot?](repeating: nil, count: count)
        for (index, value) in changes {
            values[Int(index)] = slot(localize(value, foreign), object: object, property: Int(index))
        }
        return values
    }

    /// Stores large unordered to-many values as sets.
    private func slot(_ value: PropertyValue, object: ObjectReference, property: Int) -> Slot {
        guard case .toMany(let targets) = value, targets.count > Slot.setThreshold, !isOrdered(object, property) else {
            return .value(value)
        }
        return .targets(Set(targets))
    }

    private func isOrdered(_ object: ObjectReference, _ property: Int) -> Bool {
        if case .relationship(let relationship)? = catalog?.property(UInt32(property), ofEntity: object.entityIndex) {
            return relationship.isOrdered
        }
        return false
    }
}
