import LogFormat

// A file backend's part in saves across stores: each is LogFormat's writer call, with its error converted.
extension FileBackend {
    func waitUntilWritten(_ transaction: QueuedTransaction) throws(EventGraphError) {
        guard let writer, let appended = transaction.appended else { return }
        do { try writer.waitUntilWritten(appended) } catch { throw EventGraphError(error) }
    }

    func poison(because reason: String, discarding transaction: QueuedTransaction?) {
        writer?.poison(because: reason, discarding: transaction?.appended)
    }

    func isPart(_ transactionID: UInt64, ofSave id: LogUUID) throws(EventGraphError) -> Bool? {
        try CrossStoreLedger.isPart(transactionID, ofSave: id, inLogAt: path)
    }

    func discardLastTransaction(_ last: CrossStoreLedger.LastTransaction) throws(EventGraphError) {
        guard let writer else { throw EventGraphError(.readOnly, "\(path) is open read-only") }
        do {
            try writer.discardLastTransaction(
                last.transactionID, startingAt: last.byteOffset, previousTransactionID: last.previousTransactionID)
        } catch {
            throw EventGraphError(error)
        }
    }
}

extension ReplayRecord {
    /// The changeset header of a transaction record.
    var changesetHeader: ChangesetHeader? {
        if case .transaction(let changeset, _) = self { changeset.header } else { nil }
    }
}
