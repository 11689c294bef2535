import Foundation
import LogFormat

@testable import EventGraph

/// A second conformer of ``ObjectStore``, to show that contexts and objects need nothing of ``Store``: the rows of
/// several stores in one dictionary, commits applied in memory without a log, conflict detection and indexes left
/// out (a fetch then scans). Every store numbers its objects from 1, so keys repeat across stores.
final class DictionaryObjectStore: ObjectStore {
    private struct State {
        var rows: [ObjectIdentity: Row] = [:]
        /// Identities in first-insert order, so scans see commit order.
        var order: [ObjectIdentity] = []
        var nextKeys: [UInt64]
        var lastTransactionID: UInt64 = 0
        var requests: [CommitRequest] = []
    }

    let model: ObjectModel
    let storeUUIDs: [UUID]
    let isReadOnly = false
    /// The store that new objects of an entity go to, by entity name; store 0 for the others.
    private let placement: [String: UInt32]
    /// Configurations whose store this object store says is not mounted.
    private let unmountedConfigurations: Set<String>
    private let state: LockedValue<State>

    init(
        model: ObjectModel, storeCount: Int, placement: [String: UInt32] = [:],
        unmountedConfigurations: Set<String> = []
    ) {
        self.model = model
        self.storeUUIDs = (0..<storeCount).map { _ in UUID() }
        self.placement = placement
        self.unmountedConfigurations = unmountedConfigurations
        self.state = LockedValue(State(nextKeys: Array(repeating: 1, count: storeCount)))
    }

    /// Every request committed so far, in order.
    var requests: [CommitRequest] { state.withLock { $0.requests } }

    var lastTransactionID: UInt64 { state.withLock { $0.lastTransactionID } }

    func isMounted(configuration name: String) -> Bool { !unmountedConfigurations.contains(name) }

    /// Puts a committed object in place directly, as if another process had saved it.
    func seed(_ entityName: String, inStore storeIndex: UInt32, key: UInt64, _ values: [String: PropertyValue]) {
        guard let entity = model.entity(named: entityName) else { preconditionFailure("no entity \(entityName)") }
        var row = entity.defaultValues
        for (name, value) in values { row[entity.propertyIndexByName[name]!] = value }
        let identity = ObjectIdentity(storeIndex: storeIndex, key: key)
        state.withLock { state in
            state.lastTransactionID += 1
            if state.rows[identity] == nil { state.order.append(identity) }
            state.rows[identity] = Row(
                entityIndex: entity.index, key: key, version: state.lastTransactionID, values: row)
            state.nextKeys[Int(storeIndex)] = max(state.nextKeys[Int(storeIndex)], key + 1)
        }
    }

    // MARK: - Reading

    func row(of identity: ObjectIdentity, entityIndex: Int) -> Row? {
        state.withLock { $0.rows[identity] }.flatMap { $0.entityIndex == entityIndex ? $0 : nil }
    }

    func row(of identity: ObjectIdentity, in entityIndices: [Int]) -> Row? {
        state.withLock { $0.rows[identity] }.flatMap { entityIndices.contains($0.entityIndex) ? $0 : nil }
    }

    func lookUpCommittedRow(of identity: ObjectIdentity, entityIndex: Int) -> CommittedRow? {
        committedRow(of: identity, entityIndex: entityIndex)
    }

    func lookUpCommittedRow(of identity: ObjectIdentity, in entityIndices: [Int]) -> CommittedRow? {
        committedRow(of: identity, in: entityIndices)
    }

    func rows(of entityIndex: Int) -> [StoreRows] {
        state.withLock { state in
            var rows = storeUUIDs.map { _ in [Row?]() }
            for identity in state.order {
                guard let row = state.rows[identity], row.entityIndex == entityIndex else { continue }
                rows[Int(identity.storeIndex)].append(row)
            }
            return rows.indices.map { StoreRows(storeIndex: UInt32($0), rows: rows[$0]) }
        }
    }

    func rowCount(of entityIndices: [Int]) -> Int {
        state.withLock { state in state.rows.values.count { entityIndices.contains($0.entityIndex) } }
    }

    func indexedRows(
        entityIndex: Int, ranges: [(propertyIndex: Int, range: IndexRange)], including extra: [ObjectIdentity]
    ) throws(EventGraphError) -> [StoreRows]? {
        nil
    }

    func identity(holding tuple: UniqueKey) throws(EventGraphError) -> ObjectIdentity? {
        state.withLock { state in
            state.order.first { identity in
                guard let row = state.rows[identity] else { return false }
                return model.entities[row.entityIndex].uniqueConstraints.contains {
                    UniqueKey($0, values: row.values) == tuple
                }
            }
        }
    }

    func readBlob(_ reference: BlobReference, inStore storeIndex: UInt32) throws(EventGraphError) -> [UInt8]? {
        preconditionFailure("a dictionary store keeps binary values in its rows")
    }

    // MARK: - Writing

    func reserveIdentity(for entity: EntityDescription) -> ObjectIdentity {
        let storeIndex = placement[entity.name] ?? 0
        return state.withLock { state in
            defer { state.nextKeys[Int(storeIndex)] += 1 }
            return ObjectIdentity(storeIndex: storeIndex, key: state.nextKeys[Int(storeIndex)])
        }
    }

    func commit(_ request: CommitRequest) throws(EventGraphError) -> CommitResult {
        state.withLock { state in
            state.lastTransactionID += 1
            state.requests.append(request)
            let version = state.lastTransactionID
            // One row per object, the last an operation left it with, in the order of first touch (as a store's).
            var touched: [(identity: ObjectIdentity, row: Row?)] = []
            var positions: [ObjectIdentity: Int] = [:]
            for operation in request.operations {
                let row = Self.apply(operation, to: &state, version: version, model: model)
                if let position = positions[row.identity] {
                    touched[position].row = row.row
                } else {
                    positions[row.identity] = touched.count
                    touched.append((row.identity, row.row))
                }
            }
            return CommitResult(transactionID: version, rows: touched, permanentIdentities: [:])
        }
    }

    private static func apply(_ operation: ChangeOperation, to state: inout State, version: UInt64, model: ObjectModel)
        -> (identity: ObjectIdentity, row: Row?)
    {
        func put(_ reference: ObjectReference, _ values: [PropertyValue]) -> (ObjectIdentity, Row?) {
            let row = Row(entityIndex: Int(reference.entityIndex), key: reference.key, version: version, values: values)
            if state.rows[reference.identity] == nil { state.order.append(reference.identity) }
            state.rows[reference.identity] = row
            return (reference.identity, row)
        }
        switch operation {
        case .insert(let reference, let changes):
            var values = model.entities[Int(reference.entityIndex)].defaultValues
            for change in changes { values[Int(change.propertyIndex)] = change.value }
            return put(reference, values)
        case .update(let reference, let changes):
            var values = state.rows[reference.identity]!.values.array
            for change in changes { values[Int(change.propertyIndex)] = change.value }
            return put(reference, values)
        case .relate(let reference, let propertyIndex, let added, let removed):
            var values = state.rows[reference.identity]!.values.array
            var targets = values[Int(propertyIndex)].references
            targets.removeAll { target in removed.contains { $0.identity == target.identity } }
            targets += added.filter { new in !targets.contains { $0.identity == new.identity } }
            values[Int(propertyIndex)] = .toMany(targets)
            return put(reference, values)
        case .delete(let reference):
            state.rows[reference.identity] = nil
            state.order.removeAll { $0 == reference.identity }
            return (reference.identity, nil)
        }
    }
}
