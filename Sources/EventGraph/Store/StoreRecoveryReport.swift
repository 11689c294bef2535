import Foundation
import LogFormat

/// What opening a store left out of its file, and why.
///
/// A *torn tail* is what a crash leaves: bytes written after the last sync that never became a committed save
/// (a flipped byte in the last, unsealed transaction cannot be told from one, so it is treated the same way). No
/// acknowledged `.full` save is ever in it. A writer cuts it off before appending; a read-only view ignores it.
/// *Damage* is different: data that had been synced fails its checks. A store with damage refuses to open for
/// writing; a read-only view shows it up to the damage.
public struct StoreRecoveryReport: Hashable, Sendable, CustomStringConvertible {
    /// What was done with the bytes that were left out.
    public enum Kind: Hashable, Sendable {
        /// A writer truncated a torn tail from the file.
        case truncatedTornTail
        /// A read-only view did not read a torn tail (it stays in the file until a writer opens the store).
        case ignoredTornTail
        /// A read-only view stopped at damage to synced data (nothing after it is shown).
        case stoppedAtDamage
        /// Nothing was left out of the file, but the log lacks some transaction IDs (see
        /// ``missingTransactionIDs``): a salvage copied everything around damage it could not read.
        case missingTransactions
        /// A read-only view of one store left out its last transaction: a part of a save across stores that only
        /// opening the stores together can decide (``transactionIDs`` names it).
        case leftOutUndecidedSave
        /// Opening stores together cut the last transaction off a store's log: a part of a save across stores
        /// that another of the stores lacks, so the save did not commit (``transactionIDs`` names it).
        case removedPartialSave
    }

    /// What was done.
    public var kind: Kind
    /// The store file.
    public var path: String
    /// Where the bytes that were left out start.
    public var byteOffset: UInt64
    /// How many bytes were left out (from ``byteOffset`` to the end of the file).
    public var byteCount: UInt64
    /// Why the first frame there was not accepted (for example "frame body checksum mismatch").
    public var reason: String
    /// The transactions left out, when known: for a torn tail, those whose frame headers still name them; for
    /// damage, those between the last and the next transaction that verify (`nil` when open-ended).
    public var transactionIDs: ClosedRange<UInt64>?
    /// The last transaction that was read (0 when none).
    public var lastTransactionID: UInt64
    /// The transaction IDs missing between the transactions the log holds (since its last checkpoint): the
    /// transactions a salvage lost. Transaction IDs increase through a log but may have such gaps; the store opens
    /// for writing all the same, and new saves continue after the last ID.
    public var missingTransactionIDs: [ClosedRange<UInt64>] = []

    /// Creates a report.
    public init(
        kind: Kind, path: String, byteOffset: UInt64, byteCount: UInt64, reason: String,
        transactionIDs: ClosedRange<UInt64>?, lastTransactionID: UInt64
    ) {
        self.kind = kind
        self.path = path
        self.byteOffset = byteOffset
        self.byteCount = byteCount
        self.reason = reason
        self.transactionIDs = transactionIDs
        self.lastTransactionID = lastTransactionID
    }

    /// One sentence naming the file, the byte offset, the bytes and transactions left out, and why.
    public var description: String {
        let action =
            switch kind {
            case .truncatedTornTail: "dropped a torn tail (never-synced bytes from a crash)"
            case .ignoredTornTail:
                "read-only view ignored a torn tail (bytes not synced: left by a crash, or a save still being written)"
            case .stoppedAtDamage: "read-only view stopped at damage to synced data"
            case .missingTransactions: "the log lacks some transactions (\(reason))"
            case .leftOutUndecidedSave: "read-only view left out an undecided part of a save across stores"
            case .removedPartialSave: "removed the part of a save across stores that another store lacks"
            }
        var text = "\(path): \(action)"
        if kind != .missingTransactions { text += ": \(byteCount) bytes at byte offset \(byteOffset) (\(reason))" }
        if let ids = transactionIDs {
            text +=
                ids.lowerBound == ids.upperBound
                ? "; transaction \(ids.lowerBound)" : "; transactions \(ids.lowerBound)...\(ids.upperBound)"
            text += kind == .stoppedAtDamage ? " affected" : " not committed"
        } else if kind == .stoppedAtDamage {
            text += "; transactions after \(lastTransactionID) are not shown"
        }
        if !missingTransactionIDs.isEmpty {
            let ranges = missingTransactionIDs.map { ids in
                ids.lowerBound == ids.upperBound ? "\(ids.lowerBound)" : "\(ids.lowerBound)...\(ids.upperBound)"
            }
            text += "; transaction IDs missing from the log: " + ranges.joined(separator: ", ")
        }
        return text + "; the store ends at transaction \(lastTransactionID)"
    }

    /// The default handler: one line on standard error. A library has no logger of its own to use, and data left
    /// out of a store must never go unnoticed; set ``ModelContainer/Configuration/recoveryHandler`` to route it
    /// into the application's logging instead.
    public static let logToStandardError: @Sendable (StoreRecoveryReport) -> Void = { report in
        FileHandle.standardError.write(Data("EventGraph: \(report)\n".utf8))
    }

    /// The report of a writer's open, when it truncated a torn tail.
    init?(path: String, recovery: RecoveryReport) {
        guard let tail = recovery.truncatedTail else { return nil }
        self.init(path: path, tail: tail, kind: .truncatedTornTail, lastTransactionID: recovery.scan.lastTransactionID)
    }

    /// The report of a read-only scan that did not reach the end of the file.
    init?(path: String, scan: ScanReport) {
        switch scan.tail {
        case .clean:
            return nil
        case .torn(let tail) where tail.isPreallocatedSpace:
            // Zeros a writer keeps ahead of its last frame (running, or crashed): not data, nothing left out (a
            // writer's open cuts them off without a report too).
            return nil
        case .torn(let tail):
            self.init(path: path, tail: tail, kind: .ignoredTornTail, lastTransactionID: scan.lastTransactionID)
        case .damaged(let damage):
            self.init(
                kind: .stoppedAtDamage, path: path, byteOffset: damage.byteOffset,
                byteCount: scan.fileByteCount - min(damage.byteOffset, scan.fileByteCount), reason: damage.reason,
                transactionIDs: damage.affectedTransactionIDs, lastTransactionID: scan.lastTransactionID)
        }
    }

    private init(path: String, tail: TornTail, kind: Kind, lastTransactionID: UInt64) {
        self.init(
            kind: kind, path: path, byteOffset: tail.byteOffset, byteCount: tail.byteCount, reason: tail.reason,
            transactionIDs: tail.transactionIDs.first.map { $0...tail.transactionIDs.last! },
            lastTransactionID: lastTransactionID)
    }
}
