/// What changed in one context at one point: what ``ObjectContext/observeChanges(_:)`` and
/// ``ObjectContext/changes`` deliver.
///
/// Only values — IDs, property names and property values — never objects, so it may be handed to another isolation
/// domain. Objects inserted and not yet saved by a root context have temporary IDs (``ObjectID/isTemporary``); the
/// ``Reason/saved(transactionID:)`` event of a root's save names them by their permanent IDs. Compare IDs across
/// that point by ``ObjectID/permanentForm``.
public struct ContextChanges: Hashable, Sendable {
    /// Why the context reports changes.
    public enum Reason: Hashable, Sendable {
        /// Its own unsaved changes made since the last report: at ``ObjectContext/processPendingChanges()``, and
        /// at the start of every ``ObjectContext/save()``.
        case processed
        /// A child context's save made its changes this context's unsaved changes.
        case pushedByChild
        /// This context saved: into the store as transaction `transactionID`, or into its parent context (`nil`).
        /// With several stores, transaction IDs are numbered per store: `transactionID` is the save's transaction
        /// in the first store it wrote (in the container's order), and ``ContextChanges/transactions`` names every
        /// store's.
        case saved(transactionID: UInt64?)
        /// ``ObjectContext/rollback()`` discarded changes reported before: objects reported inserted are reported
        /// deleted, objects reported deleted inserted again, and reported updates updated back.
        case rolledBack
        /// Changes made elsewhere were merged into the context's objects (see
        /// ``ObjectContext/automaticallyMergesChangesFromParent``): a transaction committed by another context
        /// (its ID), or a change of the parent context (`nil`).
        case merged(transactionID: UInt64?)
    }

    /// The name of the context that reports (``ObjectContext/name``).
    public var contextName: String
    /// Why it reports.
    public var reason: Reason
    /// One entry per object, in the order the context met them. ``CommittedTransaction/Change/values`` holds the
    /// new value of each changed key where it is at hand (externally stored values, and to-many relationships
    /// changed by adding or removing targets, are only named in ``CommittedTransaction/Change/changedKeys``, and so
    /// are a rollback's values that a checkpoint chunk that cannot be read holds); ``CommittedTransaction/Change/oldValues``
    /// is empty.
    public var changes: [CommittedTransaction.Change]
    /// The committed transactions the report is about, each with its store: for a root's save
    /// (``Reason/saved(transactionID:)``), one per store the save wrote; for a merge of a committed transaction
    /// (``Reason/merged(transactionID:)``), that transaction; empty otherwise.
    public var transactions: [StoreTransaction]

    /// Creates a report.
    public init(
        contextName: String, reason: Reason, changes: [CommittedTransaction.Change],
        transactions: [StoreTransaction] = []
    ) {
        self.contextName = contextName
        self.reason = reason
        self.changes = changes
        self.transactions = transactions
    }

    /// The objects inserted.
    public var insertedIDs: [ObjectID] { ids(of: .inserted) }
    /// The objects updated.
    public var updatedIDs: [ObjectID] { ids(of: .updated) }
    /// The objects deleted.
    public var deletedIDs: [ObjectID] { ids(of: .deleted) }

    private func ids(of kind: CommittedTransaction.Change.Kind) -> [ObjectID] {
        changes.compactMap { $0.kind == kind ? $0.objectID : nil }
    }
}

extension ObjectID {
    /// The ID an object keeps once saved: the same store, entity and key, not temporary. An inserted object's
    /// temporary ID and its permanent one differ as values (``isTemporary``); their permanent forms are equal.
    public var permanentForm: ObjectID { permanent }
}
