public import Foundation
import LogFormat

extension ModelContainer {
    /// Every transaction committed after `transactionID`, read from the log, in transaction order: the persistent
    /// change feed of a container of one store.
    ///
    /// Keep the ``CommittedTransaction/transactionID`` of the last transaction you processed and pass it here to
    /// resume, also after a restart: the result holds exactly the transactions committed since. Unlike change
    /// notifications, each change also carries ``CommittedTransaction/Change/oldValues`` (for a delete, every
    /// property of the object) and the complete new value of every changed key, since the log's history has them.
    /// Pass 0 for the whole history. A container of several stores numbers transactions per store: use
    /// ``changes(afterEach:)``.
    ///
    /// The log is read from its start each time (it has no index by transaction), so ask for changes in batches
    /// rather than per transaction. Transactions committed while this call reads the log are left to the next call.
    ///
    /// - Throws: ``EventGraphError`` with code `historyCompacted` when ``compact()`` has dropped transactions
    ///   after `transactionID` from the log ("history compacted before transaction T": refetch the current state
    ///   and resume after T − 1); `invalidArgument` when `transactionID` is later than ``lastTransactionID``, or
    ///   when the container has several stores; `log` when the log cannot be read.
    public func changes(after transactionID: UInt64) throws(EventGraphError) -> [CommittedTransaction] {
        guard stores.count == 1 else {
            throw EventGraphError(
                .invalidArgument,
                "the container has \(stores.count) stores, each numbering its own transactions: ask "
                    + "changes(afterEach:) with the last transaction processed of each store")
        }
        return try changes(in: store, after: transactionID)
    }

    /// Every transaction committed in any of the container's stores after the transaction given for that store
    /// (by store UUID; a store left out is read from its start), read from the logs: the persistent change feed.
    ///
    /// Each store's transactions are in its transaction order; the stores' lists are merged by commit time (a tie
    /// keeps the container's order of stores), so the parts of a save across stores
    /// (``CommittedTransaction/crossStoreParts``) come together. Keep the last ``CommittedTransaction/transactionID``
    /// processed of each ``CommittedTransaction/storeUUID`` and pass them here to resume, also after a restart
    /// (``TransactionObservation/registeredAfterTransactions`` gives the positions where a live observation
    /// started). Otherwise as ``changes(after:)``, store by store.
    ///
    /// - Throws: ``EventGraphError`` as ``changes(after:)``, naming the store's file; `invalidArgument` also for a
    ///   UUID that names no store of the container.
    public func changes(afterEach positions: [UUID: UInt64]) throws(EventGraphError) -> [CommittedTransaction] {
        if let unknown = positions.keys.first(where: { uuid in !stores.contains { $0.storeUUID == uuid } }) {
            throw EventGraphError(.invalidArgument, "the container has no store \(unknown)")
        }
        var lists: [[CommittedTransaction]] = []
        for store in stores {
            lists.append(try changes(in: store, after: positions[store.storeUUID] ?? 0))
        }
        var merged: [(order: Int, transaction: CommittedTransaction)] = []
        for (order, list) in lists.enumerated() { merged += list.map { (order, $0) } }
        // Stable: each store's list is already in transaction order, which its commit times follow.
        merged.sort { a, b in
            (a.transaction.commitTimeMicroseconds, a.order) < (b.transaction.commitTimeMicroseconds, b.order)
        }
        return merged.map(\.transaction)
    }

    /// One store's transactions after `transactionID`, from its log.
    private func changes(in store: Store, after transactionID: UInt64) throws(EventGraphError)
        -> [CommittedTransaction]
    {
        // Read before the log: every transaction up to it is durable, hence whole in the file the view reads.
        let through = store.lastTransactionID
        let storeName =
            stores.count == 1
            ? path ?? "the in-memory store" : (store.backend as? FileBackend)?.path ?? "store \(store.storeUUID)"
        guard transactionID <= through else {
            throw EventGraphError(
                .invalidArgument,
                "\(storeName) has no transaction \(transactionID): its last committed transaction is \(through)")
        }
        var feed = ChangeFeedReader(
            model: store.model, storeUUID: store.storeUUID, after: transactionID, source: storeName)
        try store.backend.readOnlyView().replay { record throws(EventGraphError) in
            if case .checkpointBegin(let begin) = record, begin.lastTransactionID > transactionID {
                throw EventGraphError(
                    .historyCompacted,
                    "\(storeName): history compacted before transaction \(begin.lastTransactionID + 1); the log no "
                        + "longer holds transactions \(transactionID + 1) through \(begin.lastTransactionID), so "
                        + "changes after transaction \(transactionID) cannot be replayed (refetch, then resume "
                        + "after transaction \(begin.lastTransactionID))")
            }
            if case .transaction(let changeset, _) = record, changeset.transactionID > through { return }
            try feed.apply(record)
        }
        return feed.transactions
    }
}

/// Replays a log with the store's replay engine (for old and complete new values) and collects the transactions
/// after a token as ``CommittedTransaction``s.
private struct ChangeFeedReader {
    let model: ObjectModel
    let storeUUID: UUID
    let after: UInt64
    private var replayer: Replayer
    /// Each entity's property indices by name.
    private let propertyIndices: [[String: Int]]
    private let entityIndices: [String: Int]
    private(set) var transactions: [CommittedTransaction] = []

    init(model: ObjectModel, storeUUID: UUID, after: UInt64, source: String) {
        self.model = model
        self.storeUUID = storeUUID
        self.after = after
        // The store replayed this log when it opened, so the strict policy holds; no index is read here.
        replayer = Replayer(model: model, untilTransaction: nil, buildsIndexes: false, source: source)
        propertyIndices = model.entities.map { entity in
            Dictionary(uniqueKeysWithValues: entity.properties.enumerated().map { ($1.name, $0) })
        }
        entityIndices = Dictionary(uniqueKeysWithValues: model.entities.enumerated().map { ($1.name, $0) })
    }

    mutating func apply(_ record: ReplayRecord) throws(EventGraphError) {
        guard case .transaction(let changeset, _) = record, changeset.transactionID > after else {
            return try replayer.consume(record)
        }
        var transaction = CommittedTransaction(changeset.changeset, model: model, storeUUID: storeUUID)
        for index in transaction.changes.indices where transaction.changes[index].kind != .inserted {
            try fill(&transaction.changes[index], old: true)
        }
        try replayer.consume(record)
        for index in transaction.changes.indices where transaction.changes[index].kind != .deleted {
            try fill(&transaction.changes[index], old: false)
        }
        transactions.append(transaction)
    }

    /// Sets the old values of `change` (for a delete: of every persistent property) or its new values, as the
    /// replayed state holds them now. Externally stored values are left out: their bytes are not read.
    ///
    /// - Throws: the error of a checkpoint chunk that holds the object and cannot be loaded (the old values of an
    ///   object of the checkpoint are read before the transaction is replayed, which would meet the same chunk).
    private func fill(_ change: inout CommittedTransaction.Change, old: Bool) throws(EventGraphError) {
        guard let state = replayer.state, let entityIndex = entityIndices[change.objectID.entityName],
            let row = try state.tables[entityIndex].loadedRow(forKey: change.objectID.key)
        else { return }
        let entity = model.entities[entityIndex]
        let values = ChangeValues(model: model, storeUUID: storeUUID) { index in
            state.storeUUID(of: ObjectReference(storeIndex: index, entityIndex: 0, key: 0))
        }
        let keys =
            change.kind == .deleted
            ? entity.properties.filter { $0.attribute?.isTransient != true }.map(\.name) : Array(change.changedKeys)
        for key in keys {
            guard let property = propertyIndices[entityIndex][key], property < row.values.count,
                let value = values.objectValue(row.values[property])
            else { continue }
            if old { change.oldValues[key] = value } else { change.values[key] = value }
        }
    }
}
