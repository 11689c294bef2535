import EventGraph
import LogFormat

extension StoreLoader {
    /// A part of a save across stores that a log ends with, which no other record decided.
    struct UndecidedPart {
        let changeset: Changeset
        let transaction: TransactionRecord
        /// What the stores given decided (`.undecided` naming every other participant until they are asked).
        var decision: CrossStoreDecision

        init(changeset: Changeset, transaction: TransactionRecord, storeUUID: LogUUID) {
            self.changeset = changeset
            self.transaction = transaction
            let others = (changeset.crossStore?.participants ?? []).map(\.storeUUID).filter { $0 != storeUUID }
            decision = .undecided(missing: others)
        }

        var saveID: LogUUID { changeset.crossStore!.id }
        var isShown: Bool { decision == .committed }

        /// One sentence for a terminal.
        var text: String {
            let head = "transaction \(changeset.transactionID) is a part of save \(saveID) across stores"
            return switch decision {
            case .committed: head + ", which committed (every store given holds its part)"
            case .notCommitted(let lacking):
                head + ", which did not commit: store \(lacking) lacks its part; left out (opening the stores "
                    + "together cuts it off this log)"
            case .undecided(let missing):
                head + ", undecided: only opening it with store\(missing.count == 1 ? "" : "s") "
                    + missing.map { "\($0)" }.joined(separator: ", ") + " decides whether it committed; left out"
            case .cannotTell(let store):
                head + ", undecided: store \(store) cannot tell whether it holds its part (a checkpoint holds that "
                    + "transaction); left out"
            }
        }

        var json: [String: Any] {
            var object: [String: Any] = [
                "transactionID": changeset.transactionID, "saveID": "\(saveID)",
                "participants": (changeset.crossStore?.participants ?? []).map {
                    ["storeUUID": "\($0.storeUUID)", "transactionID": $0.transactionID]
                },
                "shown": isShown,
            ]
            switch decision {
            case .committed: object["decision"] = "committed"
            case .notCommitted(let lacking):
                object["decision"] = "notCommitted"
                object["lackingStore"] = "\(lacking)"
            case .undecided(let missing):
                object["decision"] = "undecided"
                object["decidedBy"] = missing.map { "\($0)" }
            case .cannotTell(let store):
                object["decision"] = "cannotTell"
                object["cannotTellStore"] = "\(store)"
            }
            return object
        }
    }
}
