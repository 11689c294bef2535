package import LogFormat

/// Whether a save across stores that a log ends with, undecided, committed (`Docs/FileFormat.md` §3.6): the one
/// rule that a container applies when it opens its stores together (``CrossStoreRecovery``) and that the tools
/// (`egctl`) apply to the stores they are given, so that both show the same data.
package enum CrossStoreDecision: Equatable, Sendable {
    /// Every participant holds its part: the save committed.
    case committed
    /// This participant lacks its part: the save did not commit (decisive, whatever the others say).
    case notCommitted(lacking: LogUUID)
    /// These participants were not given: only their logs can decide.
    case undecided(missing: [LogUUID])
    /// This participant's log cannot tell whether it holds its part (a checkpoint now holds that transaction).
    case cannotTell(LogUUID)

    /// One log the decision may ask, as it was replayed.
    package struct Log {
        package var storeUUID: LogUUID
        package var ledger: CrossStoreLedger
        /// The log's last transaction (the store's, which may have confirmed a save since its replay).
        package var lastTransactionID: UInt64
        /// Reads whether the log's transaction is a part of a save from the file again (`nil`: the log no longer
        /// holds that transaction); asked only about a transaction before the log's last part of such a save.
        package var readPart: (_ transactionID: UInt64, _ id: LogUUID) throws(EventGraphError) -> Bool?

        package init(
            storeUUID: LogUUID, ledger: CrossStoreLedger, lastTransactionID: UInt64,
            readPart: @escaping (UInt64, LogUUID) throws(EventGraphError) -> Bool?
        ) {
            self.storeUUID = storeUUID
            self.ledger = ledger
            self.lastTransactionID = lastTransactionID
            self.readPart = readPart
        }

        /// A log read from the file at `path` (by a tool), with the ledger kept while reading it.
        package init(storeUUID: LogUUID, path: String, ledger: CrossStoreLedger) {
            self.init(storeUUID: storeUUID, ledger: ledger, lastTransactionID: ledger.lastTransactionID) {
                transactionID, id throws(EventGraphError) in
                try CrossStoreLedger.isPart(transactionID, ofSave: id, inLogAt: path)
            }
        }
    }

    /// Decides the save `record` from `logs`, the logs given (any of which may end with a part of it): one that
    /// lacks its part decides *not committed*; otherwise a participant not given leaves it *undecided*, one whose
    /// log cannot tell leaves it so; when every participant holds its part, it *committed*.
    package init(_ record: CrossStoreTransaction, among logs: [Log]) throws(EventGraphError) {
        var missing: [LogUUID] = []
        var unknown: LogUUID?
        for participant in record.participants {
            guard let log = logs.first(where: { $0.storeUUID == participant.storeUUID }) else {
                missing.append(participant.storeUUID)
                continue
            }
            switch try log.holds(record.id, asTransaction: participant.transactionID) {
            case true?: continue
            case false?:
                self = .notCommitted(lacking: participant.storeUUID)
                return
            case nil: unknown = unknown ?? participant.storeUUID
            }
        }
        if !missing.isEmpty {
            self = .undecided(missing: missing)
        } else if let unknown {
            self = .cannotTell(unknown)
        } else {
            self = .committed
        }
    }
}

extension CrossStoreDecision.Log {
    /// Whether this log holds the save `id` as its transaction `transactionID` (`nil`: it cannot tell).
    func holds(_ id: LogUUID, asTransaction transactionID: UInt64) throws(EventGraphError) -> Bool? {
        switch ledger.holds(id, asTransaction: transactionID, lastTransactionID: lastTransactionID) {
        case .holds: true
        case .lacks: false
        case .unknown: nil
        case .readTheLog: try readPart(transactionID, id)
        }
    }
}
