import LogFormat

/// Migration of a store to a new model version: the old log replayed through a ``MigrationMapping`` into a new
/// log beside it, verified, and swapped in atomically, with the old log kept as a backup for ``rollback(path:discardingLaterTransactions:)``.
///
/// History survives: every transaction keeps its ID, commit time and author, so as-of views and `egctl history`
/// work across the migration. A crash at any step leaves the old store opening as before, or the new one
/// complete. ``ModelContainer`` runs an inferred migration by itself when a store's recorded model differs from
/// the app's (see ``ModelContainer/Configuration/migration``).
public enum StoreMigration {
    /// What of the old log the new one keeps.
    public enum HistoryMode: String, Sendable, CaseIterable {
        /// Every transaction, mapped (the default): as-of views and history work across the migration.
        case full
        /// Only the live state, as a checkpoint; history before the migration is dropped.
        case liveState
    }

    /// How a migration runs.
    public struct Options: Sendable {
        /// What of the old log the new one keeps.
        public var historyMode: HistoryMode
        /// Called as the old log is replayed (for a progress line).
        public var progress: (@Sendable (Progress) -> Void)?
        /// Whether to build the migrated state as a whole to report its digest (``Report/stateDigest``). A
        /// migration that keeps history otherwise streams the log and holds only the keys of live objects; with
        /// this set it holds one graph of the new state (never a second: the new file is still verified by its
        /// content, not by a replay).
        public var computesStateDigest = false
        /// Fault injection into the file operations (tests).
        var faultInjector: FaultInjector?
        /// The most live objects a live-state migration holds at once (tests: small windows; `nil`: the default,
        /// ``MigrationRun/liveStateWindowObjectCount``).
        var windowObjectCount: Int?
        /// What the new log's writer is handed instead of a transaction's mapped payload (tests: a writer that does
        /// not store what the mapping produced, which the verification must catch).
        var replacePayload: (@Sendable (_ transactionID: UInt64, _ payload: [UInt8]) -> [UInt8])?

        /// Options with a history mode and an optional progress callback.
        public init(historyMode: HistoryMode = .full, progress: (@Sendable (Progress) -> Void)? = nil) {
            self.historyMode = historyMode
            self.progress = progress
        }
    }

    /// How far a migration has read the old log.
    public struct Progress: Hashable, Sendable {
        /// Bytes of the old log read so far.
        public var byteOffset: UInt64
        /// The old log's size.
        public var byteCount: UInt64
        /// Transactions mapped so far.
        public var transactionCount: Int
    }

    /// What a migration did, or what a dry run found it would do.
    public struct Report: Sendable, CustomStringConvertible {
        /// The recorded model (name and version) and the target model.
        public var sourceModel: String
        public var targetModel: String
        /// Per entity and property, what changes.
        public var changes: [MigrationChange]
        /// Whether nothing had to change (the store already had the target model's shape).
        public var isUpToDate: Bool
        /// Whether this was a dry run (nothing written).
        public var isDryRun: Bool
        /// Transactions read from the old log, and those whose operations the mapping changed.
        public var transactionCount: Int
        public var affectedTransactionCount: Int
        /// Live objects per entity of the new model after the migration.
        public var objectCounts: [String: Int]
        /// Objects that share values under a uniqueness constraint of the new model (a migration refuses them).
        public var uniquenessFailures: [EventGraphError.Failure]
        /// Per entity, property and rule, the existing objects that break a validation rule of the new model (a
        /// dry run only: a migration keeps such objects, and their next save fails until they are fixed). Empty
        /// for a migration, and for a dry run that found none.
        public var validationFailures: [ValidationFailure] = []
        /// The old log's size, and the new log's (expected, for a dry run: its payloads before compression).
        public var sourceByteCount: UInt64
        public var targetByteCount: UInt64
        /// The digest of the migrated state, when the run built the state as a whole: with
        /// ``Options/computesStateDigest``, for a live-state migration, a new uniqueness constraint, or an old log
        /// with a checkpoint. A migration that keeps history otherwise streams the log without holding the state,
        /// and so does a dry run.
        public var stateDigest: StateDigest?
        /// Where the old log was kept.
        public var backupPath: String?

        public var description: String {
            if isUpToDate {
                let lines = ["the store is already at \(targetModel); nothing to migrate"]
                return (lines + validationFailures.map { "  invalid: \($0)" }).joined(separator: "\n")
            }
            var lines = [
                "\(isDryRun ? "would migrate" : "migrated") \(sourceModel) → \(targetModel): "
                    + "\(transactionCount) transactions (\(affectedTransactionCount) changed)"
            ]
            lines += changes.map { "  \($0)" }
            for (entity, count) in objectCounts.sorted(by: { $0.key < $1.key }) {
                lines.append("  \(entity): \(count) objects")
            }
            lines += uniquenessFailures.map { "  duplicate: \($0)" }
            lines += validationFailures.map { "  invalid: \($0)" }
            lines.append("  \(sourceByteCount) bytes → \(isDryRun ? "about " : "")\(targetByteCount) bytes")
            if let backupPath { lines.append("  the old log is kept at \(backupPath)") }
            return lines.joined(separator: "\n")
        }
    }

    /// Where the log at `path` is kept while a migration's result may still be rolled back.
    public static func backupPath(for path: String) -> String { path + ".premigration" }

    /// Migrates the store at `path` to `model` by inferred mapping: writes the new log beside the old one,
    /// verifies its state digest against the mapped old state, and swaps it in, keeping the old log at
    /// ``backupPath(for:)``.
    ///
    /// A store already at `model`'s shape is left alone (the report says so).
    ///
    /// - Throws: ``EventGraphError`` — `modelMismatch` naming the entity and property of a change that cannot be
    ///   inferred, or when the store was written by a newer version of the model; `uniqueness` listing the objects
    ///   that share values under a new uniqueness constraint (nothing is written); `log` when the store is in use
    ///   by another process or its log is damaged (salvage it first).
    @discardableResult
    public static func migrate(path: String, to model: ObjectModel, options: Options = Options())
        throws(EventGraphError) -> Report
    {
        try EventGraphError.converting(path: path) { () throws -> Report in
            var run = MigrationRun(path: path, versions: [model], options: options, isDryRun: false)
            return try run.execute()
        }
    }

    /// Migrates the store at `path` through a plan: the ordered versions of the model (oldest first). The store's
    /// recorded model must have the shape of one of them; each later version is reached by an inferred step, and
    /// all steps run in one pass over the log (v1 → v2 → v3 writes one new log). A step that cannot be inferred is
    /// refused, naming the entity and property: give a ``MigrationPlan`` with a custom stage for it.
    @discardableResult
    public static func migrate(path: String, through versions: [ObjectModel], options: Options = Options())
        throws(EventGraphError) -> Report
    {
        guard !versions.isEmpty else { throw EventGraphError(.invalidArgument, "a migration plan needs a version") }
        return try EventGraphError.converting(path: path) { () throws -> Report in
            var run = MigrationRun(path: path, versions: versions, options: options, isDryRun: false)
            return try run.execute()
        }
    }

    /// Migrates the store at `path` through a plan of versions and stages, inferred or custom (with code that
    /// computes what inference cannot: a type change, an entity split). The store's recorded model must have the
    /// shape of one of the plan's versions; every later stage runs in the same pass over the log, history kept.
    ///
    /// - Throws: ``EventGraphError`` as ``migrate(path:to:options:)``, and `modelMismatch` naming the stage, entity
    ///   and object when a custom stage's code throws (nothing is written; the old store is intact).
    @discardableResult
    public static func migrate(path: String, plan: MigrationPlan, options: Options = Options())
        throws(EventGraphError) -> Report
    {
        try EventGraphError.converting(path: path) { () throws -> Report in
            var run = MigrationRun(path: path, plan: plan, options: options, isDryRun: false)
            return try run.execute()
        }
    }

    /// Reports what ``migrate(path:plan:options:)`` would do, without writing anything (the stages' code runs).
    public static func dryRun(path: String, plan: MigrationPlan, options: Options = Options())
        throws(EventGraphError) -> Report
    {
        try EventGraphError.converting(path: path) { () throws -> Report in
            var run = MigrationRun(path: path, plan: plan, options: options, isDryRun: true)
            return try run.execute()
        }
    }

    /// Reports what ``migrate(path:to:options:)`` would do — every change, the objects and transactions
    /// affected, uniqueness failures, the existing objects that break a validation rule of `model`
    /// (``Report/validationFailures``), the expected size — without writing anything or taking the store's lock.
    public static func dryRun(path: String, to model: ObjectModel, options: Options = Options())
        throws(EventGraphError) -> Report
    {
        try EventGraphError.converting(path: path) { () throws -> Report in
            var run = MigrationRun(path: path, versions: [model], options: options, isDryRun: true)
            return try run.execute()
        }
    }

    /// The model recorded in the log at `path` (its first schema frame), for tools that take a target model from a
    /// store the new app version created. The schema records the original names the app declared, so a migration to
    /// such a model infers renames as one to the app's own model does.
    public static func recordedModel(path: String) throws(EventGraphError) -> ObjectModel {
        let schema = try EventGraphError.converting(path: path) { try recordedSchema(path: path) }
        guard let schema else { throw EventGraphError(.invalidArgument, "\(path) records no model") }
        return try ObjectModel(schema: schema)
    }

    /// The model recorded first in the log at `path` (what a migration maps from).
    static func recordedSchema(path: String) throws -> SchemaPayload? {
        struct Found: Error { var schema: SchemaPayload }
        do {
            try LogReader(path: path).scan { record in
                if case .schema(let schema, _) = record { throw Found(schema: schema) }
            }
        } catch let found as Found {
            return found.schema
        }
        return nil
    }

    /// Whether version identifier `a` is newer than `b`: dotted numbers compared numerically ("10" > "9",
    /// "2.1" > "2"), other identifiers never (they only differ).
    static func isNewer(_ a: String, than b: String) -> Bool {
        let left = a.split(separator: ".").map { Int($0) }
        let right = b.split(separator: ".").map { Int($0) }
        guard !left.isEmpty, !right.isEmpty, !left.contains(nil), !right.contains(nil) else { return false }
        let l = left.map { $0! }
        let r = right.map { $0! }
        for index in 0..<max(l.count, r.count) {
            let (x, y) = (index < l.count ? l[index] : 0, index < r.count ? r[index] : 0)
            if x != y { return x > y }
        }
        return false
    }
}
