import Foundation
import LogFormat

/// Decides, when a container opens its stores together, each save across stores that a store's log ends with and
/// that nobody has decided yet (`Docs/FileFormat.md`, §3.6).
///
/// Such a save committed when every participant holds its part. If so, each store that ends with it appends an
/// empty transaction after it (it is then decided for good, also for the store opened alone); if a participant
/// lacks its part, every store that holds one cuts it off its log, so that no store shows a half.
enum CrossStoreRecovery {
    /// Decides the undecided saves of `stores`, opened together in the order of `descriptions`, except those of
    /// the stores in `confirmed` (decided by an earlier pass; the positions of the stores this pass confirms are
    /// added); returns the stores whose logs lost their last transaction, by position, with that transaction
    /// (their state still shows it: reopen them, and decide again, since each now ends with an earlier one).
    ///
    /// - Throws: ``EventGraphError/Code/storeMismatch`` when a participant of an undecided save is not among the
    ///   stores, or its log cannot tell whether it holds its part (a compaction rewrote that part of its log).
    static func decide(_ stores: [Store], _ descriptions: [StoreDescription], confirmed: inout Set<Int>)
        throws(EventGraphError) -> [(position: Int, removed: CrossStoreLedger.LastTransaction)]
    {
        var undone: [(position: Int, removed: CrossStoreLedger.LastTransaction)] = []
        var decided: Set<LogUUID> = []
        func undecided(_ position: Int) -> CrossStoreLedger.LastTransaction? {
            confirmed.contains(position) ? nil : stores[position].backend.crossStoreLedger.undecided
        }
        for position in stores.indices {
            guard let last = undecided(position), let record = last.crossStore, decided.insert(record.id).inserted
            else { continue }
            let holders = stores.indices.filter { undecided($0)?.crossStore?.id == record.id }
            // Each store as it is now: one confirmed by an earlier save of this pass has a transaction more.
            let logs = stores.map { store in
                CrossStoreDecision.Log(
                    storeUUID: store.storeUUID.logUUID, ledger: store.backend.crossStoreLedger,
                    lastTransactionID: store.lastTransactionID, readPart: store.backend.isPart)
            }
            switch try CrossStoreDecision(record, among: logs) {
            case .notCommitted:
                for holder in holders {
                    let removed = undecided(holder)!
                    try stores[holder].backend.discardLastTransaction(removed)
                    undone.append((holder, removed))
                }
            case .undecided(let missing):
                throw EventGraphError(
                    .storeMismatch,
                    "\(descriptions[position]) ends with a part of save \(record.id) across stores, which store "
                        + "\(UUID(logUUID: missing[0])) took part in too, but the container was not given "
                        + "that store; open the stores together to decide whether the save committed")
            case .cannotTell(let participant):
                let other = stores.firstIndex { $0.storeUUID.logUUID == participant }!
                let transactionID = record.participants.first { $0.storeUUID == participant }!.transactionID
                throw EventGraphError(
                    .storeMismatch,
                    "\(descriptions[position]) ends with a part of save \(record.id) across stores, and "
                        + "\(descriptions[other]) cannot tell whether it holds its part (its transaction "
                        + "\(transactionID)): a compaction rewrote that part of its log while the save was "
                        + "undecided; open \(descriptions[position]) read-only with ModelContainer.view(path:) to "
                        + "inspect it")
            case .committed:
                for holder in holders {
                    try confirm(stores[holder])
                    confirmed.insert(holder)
                }
            }
        }
        return undone
    }

    /// Records that the save a store's log ends with committed: an empty transaction after it.
    static func confirm(_ store: Store) throws(EventGraphError) {
        _ = try store.commit(
            CommitRequest(author: ModelContainer.linkAuthor, operations: [], readRows: [:], mergePolicy: .error))
    }

    /// The error for a store opened on its own whose log ends with an undecided part of a save across stores.
    static func undecidedError(path: String, _ last: CrossStoreLedger.LastTransaction) -> EventGraphError {
        EventGraphError(
            .storeMismatch,
            "\(path) ends with transaction \(last.transactionID), a part of a save across stores "
                + "\(participants(of: last)) that may not have committed in all of them; open it together "
                + "with those stores (ModelContainer(model:stores:)), which decides the save, or read it with "
                + "ModelContainer.view(path:), which leaves that save out")
    }

    /// The error for a migration of a store whose log ends with an undecided part of a save across stores: a
    /// migrated log ends with a seal, which would decide the part as committed.
    static func undecidedMigrationError(path: String, _ last: CrossStoreLedger.LastTransaction) -> EventGraphError {
        EventGraphError(
            .storeMismatch,
            "\(path) cannot be migrated: it ends with transaction \(last.transactionID), a part of a save across "
                + "stores \(participants(of: last)) that may not have committed in all of them, and a migrated log "
                + "would count it as committed; open the stores together with the model they were written with "
                + "first (ModelContainer(model:stores:) decides the save), then migrate")
    }

    private static func participants(of last: CrossStoreLedger.LastTransaction) -> String {
        (last.crossStore?.participants ?? []).map { UUID(logUUID: $0.storeUUID).uuidString }.joined(separator: ", ")
    }
}

extension ModelContainer {
    /// Decides every undecided save across `stores` (see ``CrossStoreRecovery``), reopening each store whose log
    /// lost a part, until none is left.
    static func decideSavesAcrossStores(
        _ stores: inout [Store], _ descriptions: [StoreDescription], model: ObjectModel, configuration: Configuration
    ) throws(EventGraphError) {
        var confirmed: Set<Int> = []
        // Each pass that undoes something cuts a transaction off a log, so the passes end.
        while true {
            let undone = try CrossStoreRecovery.decide(stores, descriptions, confirmed: &confirmed)
            if undone.isEmpty { return }
            for (position, removed) in undone {
                let path = descriptions[position].path
                try stores[position].close()
                stores[position] = try openStore(path: path, model: model, configuration: configuration)
                confirmed.remove(position)
                configuration.recoveryHandler?(StoreRecoveryReport(removed: removed, path: path))
            }
        }
    }

    /// Refuses a store opened on its own for writing when its log ends with an undecided part of a save across
    /// stores: writing after it would make it count as committed (`Docs/FileFormat.md`, §3.6).
    static func requireDecided(_ store: Store, path: String) throws(EventGraphError) {
        guard let last = store.backend.crossStoreLedger.undecided, !store.isReadOnly else { return }
        let error = CrossStoreRecovery.undecidedError(path: path, last)
        closeUndecided([store], because: error.message)
        throw error
    }

    /// Closes stores without deciding anything: a store whose log ends with an undecided part of a save across
    /// stores closes without its seal, which would claim the part committed.
    static func closeUndecided(_ stores: [Store], because reason: String) {
        for store in stores {
            if store.backend.crossStoreLedger.undecided != nil {
                store.backend.poison(because: reason, discarding: nil)
            }
            try? store.close()
        }
    }
}

extension StoreRecoveryReport {
    /// The report of a view that left out an undecided part of a save across stores.
    init(leftOut last: CrossStoreLedger.LastTransaction, path: String) {
        self.init(
            kind: .leftOutUndecidedSave, path: path, byteOffset: last.byteOffset, byteCount: 0,
            reason: "only opening it with the other stores of the save decides whether it committed",
            transactionIDs: last.transactionID...last.transactionID, lastTransactionID: last.previousTransactionID)
    }

    /// The report of a container that cut a part of a save across stores off a store's log.
    init(removed last: CrossStoreLedger.LastTransaction, path: String) {
        self.init(
            kind: .removedPartialSave, path: path, byteOffset: last.byteOffset, byteCount: 0,
            reason: "another store of the save lacks its part, so the save did not commit",
            transactionIDs: last.transactionID...last.transactionID, lastTransactionID: last.previousTransactionID)
    }
}
