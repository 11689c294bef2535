package import LogFormat

/// What one store's log says about saves across stores, gathered while the log is replayed: whether its last
/// transaction is a part of a save across stores that is not yet known to have committed (`Docs/FileFormat.md`,
/// §3.6), and enough about its past to tell another store whether this one holds a given save.
///
/// The store keeps one while it replays its log; the tools (`egctl`) keep one while they read a log, so that both
/// call the same part undecided and decide it alike (``CrossStoreDecision``).
package struct CrossStoreLedger: Sendable {
    /// The log's last transaction.
    package struct LastTransaction: Sendable {
        package var transactionID: UInt64
        /// Where its first frame (a blob, or the changeset) starts: where the log is cut when the save is undone.
        package var byteOffset: UInt64
        /// The transaction before it (or the checkpoint's last one), which the log continues from once it is cut.
        package var previousTransactionID: UInt64
        package var crossStore: CrossStoreTransaction?
    }

    private(set) var lastTransaction: LastTransaction?
    /// Whether a seal follows the last transaction: a writer closed cleanly after it.
    private(set) var isSealedAfterLastTransaction = false
    /// The newest transaction replayed that was a part of a save across stores, and that save's ID.
    private(set) var lastCrossStore: (transactionID: UInt64, id: LogUUID)?
    /// The last transaction a checkpoint contains: transactions up to it were not replayed one by one.
    private(set) var checkpointFloor: UInt64 = 0
    /// Per participant store, the last save across stores replayed that it shared with this one (this one's own
    /// UUID included): what a compaction would drop (see ``CrossStoreParts``).
    private(set) var lastShared: [LogUUID: CrossStoreTransaction] = [:]

    package init() {}

    /// Takes one committed record of the log, in order (`changeset` is the decoded changeset of a transaction).
    package mutating func note(_ record: LogRecord, changeset: Changeset?) {
        note(record, crossStore: changeset?.crossStore)
    }

    /// Takes one committed record of the log, in order (`crossStore` is a transaction's save across stores, if
    /// its changeset is one part of one).
    package mutating func note(_ record: LogRecord, crossStore: CrossStoreTransaction?) {
        switch record {
        case .transaction(let transaction):
            let previous = lastTransaction?.transactionID ?? checkpointFloor
            lastTransaction = LastTransaction(
                transactionID: transaction.transactionID, byteOffset: transaction.byteOffset,
                previousTransactionID: previous, crossStore: crossStore)
            isSealedAfterLastTransaction = false
            if let crossStore {
                lastCrossStore = (transaction.transactionID, crossStore.id)
                for participant in crossStore.participants { lastShared[participant.storeUUID] = crossStore }
            }
        case .checkpointBegin(let begin, _):
            checkpointFloor = begin.lastTransactionID
            lastTransaction = nil
            lastCrossStore = nil
            lastShared = [:]
        case .seal:
            isSealedAfterLastTransaction = true
        default:
            break
        }
    }

    /// The save across stores that the log ends with and that nobody has yet decided: its last transaction is
    /// one part of such a save, and no seal follows it (a seal, or any later transaction, means it committed).
    package var undecided: LastTransaction? {
        guard let last = lastTransaction, last.crossStore != nil, !isSealedAfterLastTransaction else { return nil }
        return last
    }

    /// The last transaction of the log as far as it was noted (a checkpoint's last one when none followed it).
    package var lastTransactionID: UInt64 { lastTransaction?.transactionID ?? checkpointFloor }

    /// What the ledger tells of whether a store holds a part of a save.
    enum Answer {
        case holds, lacks
        /// The ledger cannot tell: a checkpoint holds the transaction now.
        case unknown
        /// The transaction is in the log, before the last save across stores: read it there.
        case readTheLog
    }

    /// Whether this store, whose log ends at `lastTransactionID`, holds the save `id`, which it would hold as
    /// transaction `transactionID`.
    func holds(_ id: LogUUID, asTransaction transactionID: UInt64, lastTransactionID: UInt64) -> Answer {
        if let last = lastCrossStore, last.transactionID == transactionID { return last.id == id ? .holds : .lacks }
        if lastTransactionID < transactionID { return .lacks }
        if transactionID <= checkpointFloor { return .unknown }
        // Replayed from the log: a part of a save across stores only if one came after it.
        if let last = lastCrossStore, last.transactionID > transactionID { return .readTheLog }
        return .lacks
    }

    /// Whether transaction `transactionID` of the log at `path` is a part of the save `id` (`nil`: the log does not
    /// hold that transaction).
    static func isPart(_ transactionID: UInt64, ofSave id: LogUUID, inLogAt path: String) throws(EventGraphError)
        -> Bool?
    {
        var found: Bool?
        _ = try EventGraphError.converting(path: path) {
            try LogReader(path: path).scanTransactions(fromTransactionID: transactionID) { transaction in
                guard transaction.transactionID == transactionID else { return }
                found = try transaction.changeset().crossStore?.id == id
            }
        }
        return found
    }
}
