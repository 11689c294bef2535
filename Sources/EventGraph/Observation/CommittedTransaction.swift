public import Foundation
import LogFormat

/// A committed transaction, as every context sees it: what change notifications
/// (``ModelContainer/transactions``, ``ModelContainer/observeTransactions(_:)``) and the persistent change feed
/// (``ModelContainer/changes(after:)``) deliver.
///
/// Only values — IDs, property names and property values — never objects, so it crosses isolation domains. It is
/// made from the changeset exactly as the log holds it (after upserts, conflict resolution and inverse repair), so
/// a notification and a later read of the log's history describe the same transaction the same way.
public struct CommittedTransaction: Hashable, Sendable {
    /// What a transaction did to one object.
    public struct Change: Hashable, Sendable {
        /// Whether the object was created, changed or removed.
        public enum Kind: Hashable, Sendable {
            case inserted, updated, deleted
        }

        /// The object.
        public var objectID: ObjectID
        /// What happened to it.
        public var kind: Kind
        /// The properties the transaction set: for an insert those it gave values, for an update those it changed
        /// (a relationship counts when targets were added or removed); empty for a delete.
        public var changedKeys: Set<String>
        /// The new value of each changed key the changeset states in full. Externally stored binary values and
        /// to-many relationships changed by adding or removing targets are left out of notifications (only the
        /// key is in ``changedKeys``); the change feed, which rebuilds the state from the log, gives them in full.
        public var values: [String: ObjectValue]
        /// The value each changed key had before the transaction (for a delete: every property of the object).
        /// Only the change feed has them; notifications leave this empty.
        public var oldValues: [String: ObjectValue]

        /// Creates a change.
        public init(
            objectID: ObjectID, kind: Kind, changedKeys: Set<String>, values: [String: ObjectValue] = [:],
            oldValues: [String: ObjectValue] = [:]
        ) {
            self.objectID = objectID
            self.kind = kind
            self.changedKeys = changedKeys
            self.values = values
            self.oldValues = oldValues
        }
    }

    /// The transaction's number in its store (1, 2, 3, …): the token ``ModelContainer/changes(after:)`` resumes
    /// from.
    public var transactionID: UInt64
    /// The store whose log holds the transaction. Each store numbers its own transactions, so with several stores
    /// a transaction is named by both (``ModelContainer/changes(afterEach:)`` resumes from one per store).
    public var storeUUID: UUID
    /// For one part of a save across several stores: every part of that save — each store it wrote and the
    /// transaction it has there, this one included — in ascending order of store UUID; empty for a save of one
    /// store. Such a save is delivered as one transaction per store, each in its own store's order; this list ties
    /// them together (all parts committed, or none did).
    public var crossStoreParts: [StoreTransaction] = []
    /// When it was committed, in microseconds since 1970-01-01T00:00:00Z (as the log records it).
    public var commitTimeMicroseconds: Int64
    /// The name of the context that saved it.
    public var author: String
    /// One entry per object, in the order the changeset first touches them.
    public var changes: [Change]

    /// When it was committed.
    public var commitTime: Date {
        Date(timeIntervalSince1970: Double(commitTimeMicroseconds) / 1_000_000)
    }

    /// The transaction a changeset of the store with `storeUUID` and `model` commits.
    init(_ changeset: Changeset, model: ObjectModel, storeUUID: UUID) {
        transactionID = changeset.transactionID
        self.storeUUID = storeUUID
        crossStoreParts =
            changeset.crossStore?.participants.map {
                StoreTransaction(storeUUID: UUID(logUUID: $0.storeUUID), transactionID: $0.transactionID)
            } ?? []
        commitTimeMicroseconds = changeset.commitTimeMicroseconds
        author = changeset.author
        let foreign = changeset.foreignStores
        let values = ChangeValues(model: model, storeUUID: storeUUID) { index in
            index <= foreign.count ? foreign[Int(index) - 1] : nil
        }
        changes = Self.changes(of: changeset.operations, model: model, values: values)
    }

    /// One entry per object the operations touch, in the order they first touch it: the changes of a changeset, or
    /// of a context's save (``ContextChanges``). `values` names the objects, so it decides their store numbering.
    static func changes(of operations: [ChangeOperation], model: ObjectModel, values: ChangeValues) -> [Change] {
        var positions: [ObjectIdentity: Int] = [:]
        var changes: [Change] = []
        func record(_ reference: ObjectReference, _ kind: Change.Kind, _ properties: [PropertyChange]) {
            let entity = model.entities[Int(reference.entityIndex)]
            let named = properties.map { (entity.properties[Int($0.propertyIndex)].name, $0.value) }
            guard let position = positions[reference.identity] else {
                guard let objectID = values.objectID(reference) else { return }
                positions[reference.identity] = changes.count
                changes.append(Change(objectID: objectID, kind: kind, changedKeys: Set(named.map(\.0))))
                values.record(named, into: &changes[changes.count - 1])
                return
            }
            // An object inserted by this transaction stays inserted when later operations (inverse repair) touch it.
            switch (changes[position].kind, kind) {
            case (_, .deleted):
                changes[position].kind = .deleted
                changes[position].changedKeys = []
                changes[position].values = [:]
            case (.deleted, _):
                break
            default:
                changes[position].changedKeys.formUnion(named.map(\.0))
                values.record(named, into: &changes[position])
            }
        }
        for operation in operations {
            switch operation {
            case .insert(let reference, let properties): record(reference, .inserted, properties)
            case .update(let reference, let properties): record(reference, .updated, properties)
            case .relate(let reference, let index, _, _):
                // Only the difference is logged: the key changed, its new contents are not stated here.
                record(reference, .updated, [])
                let name = model.entities[Int(reference.entityIndex)].properties[Int(index)].name
                if let position = positions[reference.identity], changes[position].kind != .deleted {
                    changes[position].changedKeys.insert(name)
                    changes[position].values[name] = nil
                }
            case .delete(let reference): record(reference, .deleted, [])
            }
        }
        return changes
    }
}

/// Turns logged property values into ``ObjectValue``s: references become ``ObjectID``s.
struct ChangeValues {
    /// The ID of a referenced object; `nil` when its store is not known (a payload that does not name it).
    let objectID: (ObjectReference) -> ObjectID?

    /// Names references by a context's own numbering of stores, with temporary IDs where the context has them.
    init(objectID: @escaping (ObjectReference) -> ObjectID?) {
        self.objectID = objectID
    }

    /// Names references as a payload of the store with `storeUUID` does: index 0 is that store, a higher index one
    /// the payload names (`foreignStore`).
    init(model: ObjectModel, storeUUID: UUID, foreignStore: @escaping (UInt32) -> LogUUID?) {
        objectID = { reference in
            let index = Int(reference.entityIndex)
            guard index < model.entities.count else { return nil }
            let store: UUID
            if reference.storeIndex == 0 {
                store = storeUUID
            } else {
                guard let foreign = foreignStore(reference.storeIndex) else { return nil }
                store = UUID(logUUID: foreign)
            }
            return ObjectID(storeUUID: store, entityName: model.entities[index].name, key: reference.key)
        }
    }

    /// The value as the public API shows it; `nil` for an externally stored value (its bytes are not in the
    /// changeset) or a reference to a store the payload does not name.
    func objectValue(_ value: PropertyValue) -> ObjectValue? {
        switch value {
        case .attribute(.blob): return nil
        case .attribute(let attribute): return .attribute(StoredValue(attribute))
        case .toOne(nil): return .toOne(nil)
        case .toOne(let reference?): return objectID(reference).map { .toOne($0) }
        case .toMany(let references):
            let ids = references.compactMap(objectID)
            return ids.count == references.count ? .toMany(ids) : nil
        }
    }

    /// Sets the values of `named` properties in `change`, dropping stale ones that cannot be shown.
    func record(_ named: [(String, PropertyValue)], into change: inout CommittedTransaction.Change) {
        for (name, value) in named { change.values[name] = objectValue(value) }
    }
}
