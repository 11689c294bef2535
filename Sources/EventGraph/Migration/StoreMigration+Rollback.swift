import Foundation
import LogFormat

extension StoreMigration {
    /// What a rollback did.
    public struct RollbackReport: Hashable, Sendable, CustomStringConvertible {
        /// The model of the restored log (name and version).
        public var restoredModel: String
        /// The last transaction of the restored log.
        public var lastTransactionID: UInt64
        /// Transactions committed after the migration that the rollback dropped (0 unless allowed).
        public var discardedTransactionCount: UInt64
        /// Where the migrated log was kept.
        public var migratedLogPath: String

        public var description: String {
            "restored \(restoredModel) up to transaction \(lastTransactionID)"
                + (discardedTransactionCount > 0 ? ", dropping \(discardedTransactionCount) later transactions" : "")
                + "; the migrated log is kept at \(migratedLogPath)"
        }
    }

    /// Brings back the log a migration replaced (kept at ``backupPath(for:)``); the migrated log is kept at
    /// `path + ".migrated"`.
    ///
    /// - Parameters:
    ///   - path: the store that was migrated.
    ///   - discardingLaterTransactions: allow dropping transactions committed after the migration (the backup does
    ///     not have them); without it such a rollback is refused.
    /// - Throws: ``EventGraphError`` — `invalidArgument` when no backup exists or later transactions would be lost,
    ///   `log` when the store is in use by another process or the backup is damaged.
    @discardableResult
    public static func rollback(path: String, discardingLaterTransactions: Bool = false) throws(EventGraphError)
        -> RollbackReport
    {
        try EventGraphError.converting(path: path) { () throws -> RollbackReport in
            try rollbackNow(path: path, discardingLaterTransactions: discardingLaterTransactions)
        }
    }

    private static func rollbackNow(path: String, discardingLaterTransactions: Bool) throws -> RollbackReport {
        let backup = backupPath(for: path)
        guard FileManager.default.fileExists(atPath: backup) else {
            throw EventGraphError(
                .invalidArgument,
                "\(path) has no migration backup (\(backup) does not exist); there is nothing to roll back")
        }
        var schema: SchemaPayload?
        let scan = try LogReader(path: backup).scan { record in
            if case .schema(let recorded, _) = record { schema = recorded }
        }
        guard case .clean = scan.tail, let schema else {
            throw EventGraphError(
                .log, "the migration backup \(backup) does not read cleanly (\(scan.tail)); it was not restored")
        }
        let writer = try LogWriter(path: path, options: LogWriter.Options(createIfMissing: false))
        let later =
            writer.lastTransactionID > scan.lastTransactionID ? writer.lastTransactionID - scan.lastTransactionID : 0
        guard later == 0 || discardingLaterTransactions else {
            try? writer.close()
            throw EventGraphError(
                .invalidArgument,
                "\(path) has \(later) transactions committed after its migration (up to \(writer.lastTransactionID)) "
                    + "that the backup lacks; roll back discarding them explicitly, or keep the migrated store")
        }
        let migrated = path + ".migrated"
        do {
            try writer.replace(with: backup, keepingPreviousAt: migrated)
        } catch {
            try? writer.close()
            throw error
        }
        return RollbackReport(
            restoredModel: "\(schema.modelName) version \(schema.versionIdentifier)",
            lastTransactionID: scan.lastTransactionID, discardedTransactionCount: later, migratedLogPath: migrated)
    }
}
