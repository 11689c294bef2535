import Foundation
import LogFormat

/// A transaction as it became visible to every context: what change notifications carry.
///
/// Only values (IDs and property names), never objects, so it crosses isolation domains. It is made from the
/// changeset exactly as the log holds it (after upserts, conflict resolution and inverse repair), so a reader of
/// the log's history later derives the same value from the same frame.
struct CommittedTransaction: Hashable, Sendable {
    /// What a transaction did to one object.
    struct Change: Hashable, Sendable {
        enum Kind: Hashable, Sendable {
            case inserted, updated, deleted
        }

        var objectID: ObjectID
        var kind: Kind
        /// The properties the transaction set: for an insert those it gave values, for an update those it changed
        /// (a relationship counts when targets were added or removed); empty for a delete.
        var changedKeys: Set<String>
    }

    var transactionID: UInt64
    var commitTimeMicroseconds: Int64
    /// The name of the context that saved it.
    var author: String
    /// One entry per object, in the order the changeset first touches them.
    var changes: [Change]

    /// The transaction a changeset of the store with `storeUUID` and `model` commits.
    init(_ changeset: Changeset, model: ObjectModel, storeUUID: UUID) {
        transactionID = changeset.transactionID
        commitTimeMicroseconds = changeset.commitTimeMicroseconds
        author = changeset.author
        var positions: [UInt64: Int] = [:]
        var changes: [Change] = []
        func record(_ reference: ObjectReference, _ kind: Change.Kind, _ propertyIndices: [UInt32]) {
            let entity = model.entities[Int(reference.entityIndex)]
            let keys = propertyIndices.map { entity.properties[Int($0)].name }
            guard let position = positions[reference.key] else {
                positions[reference.key] = changes.count
                let objectID = ObjectID(storeUUID: storeUUID, entityName: entity.name, key: reference.key)
                changes.append(Change(objectID: objectID, kind: kind, changedKeys: Set(keys)))
                return
            }
            // An object inserted by this transaction stays inserted when later operations (inverse repair) touch it.
            switch (changes[position].kind, kind) {
            case (_, .deleted):
                changes[position].kind = .deleted
                changes[position].changedKeys = []
            case (.deleted, _):
                break
            default:
                changes[position].changedKeys.formUnion(keys)
            }
        }
        for operation in changeset.operations {
            switch operation {
            case .insert(let reference, let values): record(reference, .inserted, values.map(\.propertyIndex))
            case .update(let reference, let values): record(reference, .updated, values.map(\.propertyIndex))
            case .relate(let reference, let index, _, _): record(reference, .updated, [index])
            case .delete(let reference): record(reference, .deleted, [])
            }
        }
        self.changes = changes
    }
}
