public import Foundation
import LogFormat

/// A store opened with a model, and the contexts that work on it.
///
/// ```swift
/// let container = try ModelContainer(path: "/var/lib/blog.eglog", model: model)
/// let context = container.newBackgroundContext()
/// ```
/// The container is `Sendable`; contexts are not — create one per task (``newBackgroundContext(name:)``) or use
/// ``mainContext`` on the main actor.
public final class ModelContainer: Sendable {
    /// How a store is opened.
    public struct Configuration: Sendable {
        /// When a save is acknowledged (default: after `fdatasync`).
        public var durability: CommitDurability
        /// Whether a missing store file is created.
        public var createIfMissing: Bool
        /// Called once when opening left something out of the file (a torn tail cut off after a crash; see
        /// ``ModelContainer/recoveryReport``). The default writes one line to standard error; `nil` is silent.
        public var recoveryHandler: (@Sendable (StoreRecoveryReport) -> Void)?
        /// The permission bits of a store file created by this open, applied exactly: owner read and write only
        /// (`0o600`) by default, since a store holds the app's whole data and history. An existing store keeps
        /// its mode, owner and group, also across ``ModelContainer/compact()``.
        public var filePermissions: UInt32 = 0o600
        /// What opening does when the store's recorded model differs from the given one: an inferred migration
        /// by default (see ``StoreMigration``).
        public var migration: MigrationPolicy = .inferred
        /// Rewrite the log as a checkpoint (a ``ModelContainer/compact()``) after a save once this many
        /// transactions have been committed since the log's last checkpoint, so that opening never replays an
        /// unbounded tail. `nil` (the default): no threshold of transactions (with no
        /// ``automaticCheckpointTailByteCount`` either, only explicit compactions). A compaction drops the history
        /// before the checkpoint (views as of older transactions), so this is a choice, not a default.
        ///
        /// The checkpoint runs on a thread of its own: the save that crosses the count returns once it is durable,
        /// like any save, and saves go on while the checkpoint is written (they wait only while the transactions
        /// committed meanwhile are copied into the new file and it is swapped in). One runs at a time; ``close()``
        /// starts no other and cancels a running one (it stops within a batch of chunks and leaves the log as it
        /// was, with every save), so that a close never waits out a checkpoint; the next open then replays the
        /// longer tail, and a later save starts the checkpoint again. A failure fails no save: see
        /// ``ModelContainer/lastAutomaticCheckpointFailure``.
        public var automaticCheckpointTransactionCount: Int?
        /// Rewrite the log as a checkpoint (a ``ModelContainer/compact()``) after a save once the log's bytes after
        /// its last checkpoint (the whole log, before the first) reach this many, so that opening never replays an
        /// unbounded tail of a few large saves either, which ``automaticCheckpointTransactionCount`` alone does not
        /// see. `nil` (the default): no threshold of bytes. The tail is measured as it is in the file (compressed
        /// frames, external values included); the save that crosses it starts the checkpoint, as the count's does,
        /// and the two thresholds can be set together (the first reached starts it).
        ///
        /// A save that follows a checkpoint whose copied tail (the saves committed while it was written) already
        /// reaches the threshold starts the next one: a threshold far below the size of the saves committed during
        /// one checkpoint makes the store rewrite its log after most saves.
        public var automaticCheckpointTailByteCount: Int?
        /// The most bytes of decoded checkpoint chunks a store keeps in memory: 128 MiB by default.
        ///
        /// A store opened from a checkpoint reads each chunk of it (up to 4,096 objects of one entity) the first time
        /// something touches it and decodes it into columns. A chunk no save has changed since can be read again
        /// from the file, so its decoded form is kept only while it is among the most recently read within this
        /// budget; fetched objects do not keep it alive, and reading an object whose chunk was evicted reads,
        /// verifies and decodes the chunk again (about a millisecond for a chunk of 4,096 posts of the example blog
        /// app, which decode to ≈ 2.2 MB). A larger budget trades memory for fewer re-reads when an app touches
        /// more of a large store at random; `Int.max` keeps every chunk once decoded. Chunks changed by a save are
        /// in memory whatever the budget (they are not in the checkpoint any more).
        ///
        /// A chunk read again can fail. A read the system reports failed (an I/O error) is tried up to 3 more times,
        /// and the error is not kept (the next touch reads again); damage (bytes that fail their checks) is kept.
        /// An API that can throw (a save, a fetch, ``ModelContainer/stateDigest()``, ``ModelContainer/compact()``)
        /// throws the error, which names the file, the entity, the chunk and its byte offset. A property getter and
        /// a lookup by ID cannot throw: they end the process with that error and the property or key read, as Core
        /// Data does when a fault cannot be fulfilled, rather than read a null value or report an object that
        /// exists as deleted. With `Int.max`, a chunk is read once, and only damage found on that first touch can
        /// do this.
        public var decodedChunkByteBudget: Int = 128 << 20
        /// Fault injection into the log writer's file operations (tests).
        var faultInjector: FaultInjector?
        /// Told each step of a save across stores (tests that kill the process at one).
        package var crossStoreStepObserver: (@Sendable (CrossStoreCommitStep) -> Void)?

        /// Creates a configuration.
        public init(
            durability: CommitDurability = .full, createIfMissing: Bool = true,
            recoveryHandler: (@Sendable (StoreRecoveryReport) -> Void)? = StoreRecoveryReport.logToStandardError
        ) {
            self.durability = durability
            self.createIfMissing = createIfMissing
            self.recoveryHandler = recoveryHandler
        }
    }

    /// The store of a container of one store; the first of ``stores`` for several (see
    /// ``init(model:stores:configuration:)``).
    let store: Store
    /// Every mounted store, in the order they were given.
    let stores: [Store]
    /// What contexts read from and save into: ``store`` itself, or a ``StoreCoordinator`` over ``stores``.
    let objectStore: any ObjectStore
    /// Where the store's log is, when it is a file (the first store's, for several).
    public let path: String?
    private let main: MainContextBox

    /// Opens (or creates) the store at `path` with a model.
    ///
    /// `path` may be reached through symbolic links (compaction replaces the file they point to) or be one of
    /// several hard links; one store file has one writer, whatever its name, so a second container writing the
    /// same file is refused. Read-only views (``view(path:asOfTransaction:model:recoveryHandler:)``) take no lock.
    ///
    /// - Throws: ``EventGraphError`` with code `log` when the file cannot be opened (for example another
    ///   process has it open: the message names its pid) and `modelMismatch` when the store was written with
    ///   another model.
    public convenience init(path: String, model: ObjectModel, configuration: Configuration = .init())
        throws(EventGraphError)
    {
        let store = try Self.openMigratingIfNeeded(path: path, model: model, configuration: configuration) {
            () throws(EventGraphError) in try Self.openStore(path: path, model: model, configuration: configuration)
        }
        try Self.requireDecided(store, path: path)
        self.init(store: store, path: path)
        if let report = recoveryReport { configuration.recoveryHandler?(report) }
    }

    /// Opens the store at `path` with the model recorded in its log (for tools without the application's
    /// classes; objects are plain ``ManagedObject``s used through the key-value API).
    public convenience init(path: String, configuration: Configuration = .init(createIfMissing: false))
        throws(EventGraphError)
    {
        let store = try Self.openStore(path: path, model: nil, configuration: configuration)
        try Self.requireDecided(store, path: path)
        self.init(store: store, path: path)
        if let report = recoveryReport { configuration.recoveryHandler?(report) }
    }

    /// Opens a read-only view of the store at `path` *as of* a transaction: the log replayed up to it.
    ///
    /// The view takes no lock and never modifies the file. Pass `model: nil` to use the recorded model. A store
    /// with damage can be viewed as of any transaction before the damage (see ``recoveryReport``).
    public static func view(
        path: String, asOfTransaction transactionID: UInt64, model: ObjectModel? = nil,
        recoveryHandler: (@Sendable (StoreRecoveryReport) -> Void)? = StoreRecoveryReport.logToStandardError
    ) throws(EventGraphError) -> ModelContainer {
        try openView(path: path, model: model, untilTransaction: transactionID, recoveryHandler: recoveryHandler)
    }

    /// Opens a read-only view of the latest state of the store at `path`: every committed transaction, or those
    /// before the damage when synced data is damaged (``recoveryReport`` then says where, and what is missing).
    ///
    /// The view takes no lock and never modifies the file, so it also works while another process writes the
    /// store and on a store that refuses to open for writing. Pass `model: nil` to use the recorded model.
    public static func view(
        path: String, model: ObjectModel? = nil,
        recoveryHandler: (@Sendable (StoreRecoveryReport) -> Void)? = StoreRecoveryReport.logToStandardError
    ) throws(EventGraphError) -> ModelContainer {
        try openView(path: path, model: model, untilTransaction: nil, recoveryHandler: recoveryHandler)
    }

    private static func openView(
        path: String, model: ObjectModel?, untilTransaction: UInt64?,
        recoveryHandler: (@Sendable (StoreRecoveryReport) -> Void)?
    ) throws(EventGraphError) -> ModelContainer {
        let backend = try FileBackend.openReadOnly(path: path)
        var store = try Store.open(backend: backend, model: model, untilTransaction: untilTransaction, source: path)
        // A store seen on its own never shows a part of a save across stores that may not have committed.
        var leftOut: StoreRecoveryReport?
        if let last = backend.crossStoreLedger.undecided, untilTransaction ?? .max >= last.transactionID {
            leftOut = StoreRecoveryReport(leftOut: last, path: path)
            store = try Store.open(
                backend: FileBackend.openReadOnly(path: path), model: model,
                untilTransaction: last.previousTransactionID, source: path)
        }
        let view = ModelContainer(store: store, path: path)
        if let report = leftOut ?? view.recoveryReport { recoveryHandler?(report) }
        return view
    }

    static func openStore(path: String, model: ObjectModel?, configuration: Configuration)
        throws(EventGraphError) -> Store
    {
        var opened: FileBackend?
        do {
            return try Store.open(
                model: model, source: path, decodedChunkByteBudget: configuration.decodedChunkByteBudget
            ) { consume throws(EventGraphError) in
                let backend = try FileBackend.open(path: path, configuration: configuration, replay: consume)
                opened = backend
                return backend
            }.configuringAutomaticCheckpoint(configuration)
        } catch {
            try? opened?.close()
            guard error.underlying?.code == .damaged else { throw error }
            var advised = error
            advised.message += " (ModelContainer.view(path:) opens it read-only up to the damage)"
            throw advised
        }
    }

    /// Creates a store kept only in memory; for tests and previews.
    ///
    /// Its log is a file in memory, written and read by the same code as a store on disk (framing, checksums,
    /// recovery, the rewrite of a compaction), so it behaves exactly like one; it is gone when the container is.
    public convenience init(inMemoryWith model: ObjectModel) throws(EventGraphError) {
        let store = try Store.open(model: model) { consume throws(EventGraphError) in
            try FileBackend.openInMemory(configuration: Configuration(), replay: consume)
        }
        self.init(store: store, path: nil)
    }

    convenience init(store: Store, path: String?) {
        self.init(stores: [store], objectStore: store, path: path)
    }

    init(stores: [Store], objectStore: any ObjectStore, path: String?) {
        precondition(!stores.isEmpty, "a container has at least one store")
        self.store = stores[0]
        self.stores = stores
        self.objectStore = objectStore
        self.path = path
        self.main = MainContextBox(store: objectStore)
    }

    /// The model.
    public var model: ObjectModel { store.model }
    /// The store's identity (part of every ``ObjectID``).
    public var storeUUID: UUID { store.storeUUID }
    /// The last committed transaction.
    public var lastTransactionID: UInt64 { store.lastTransactionID }
    /// Whether saves are refused (a view).
    public var isReadOnly: Bool { store.isReadOnly }
    /// What opening left out of the store's file: a torn tail a crash left (cut off by a writer, ignored by a
    /// read-only view), or damage a read-only view stops at — with the transaction IDs the log lacks (a salvaged
    /// store's gaps, ``StoreRecoveryReport/missingTransactionIDs``); `nil` when the whole file was read.
    public var recoveryReport: StoreRecoveryReport? { store.recoveryReport(path: path ?? "the in-memory log") }

    /// The context of the main actor.
    @MainActor public var mainContext: ObjectContext { main.context }

    /// A new context for the calling task.
    public func newBackgroundContext(name: String = "background") -> ObjectContext {
        ObjectContext(parentStore: objectStore, name: name)
    }

    /// A view of this store *as of* a transaction (replayed from the log into a separate read-only store).
    ///
    /// The view reads the log file as it is when the view is opened: a later compaction of the store does not
    /// change it (until the view is released, the replaced file's space stays allocated).
    public func view(asOfTransaction transactionID: UInt64) throws(EventGraphError) -> ModelContainer {
        try ModelContainer(
            store: Store.open(
                backend: store.backend.readOnlyView(), model: store.model, untilTransaction: transactionID,
                source: path ?? "the in-memory log"),
            path: path)
    }

    /// A digest of the live state: equal for equal objects, values and relationships (see ``StateDigest``).
    public func stateDigest() throws(EventGraphError) -> StateDigest {
        // Chunks of the checkpoint still on disk are read: a damaged one throws rather than count as empty.
        try store.stateDigest()
    }

    /// Why the last automatic checkpoint failed (see
    /// ``Configuration/automaticCheckpointTransactionCount``); `nil` when it succeeded or none has run. The save
    /// that ran it had committed, and the log is as it was before the attempt.
    public var lastAutomaticCheckpointFailure: EventGraphError? { store.automaticCheckpoint.lastFailure }

    /// Rewrites the log as a checkpoint of the live state plus nothing else (history is dropped); the rewritten
    /// file is synced and read back whole (every frame's checksums and the checkpoint's structure) before it
    /// replaces the old one, and its end frame records the live state's digest (`egctl compact` also replays the
    /// new file and compares digests; `Docs/FileFormat-Checkpoints.md` §8).
    ///
    /// A store that took part in saves across stores since its last checkpoint first lets the other stores of
    /// those saves record their decision (`Docs/FileFormat.md` §3.6), since the rewritten log no longer can.
    ///
    /// Saves from other threads go on while it runs: the checkpoint holds the state at the moment the compaction
    /// starts, and the saves committed while it is written follow it in the new file. They wait only while those
    /// saves are copied and the file is swapped in. The call returns once the new file is in place.
    ///
    /// A ``close()`` from another thread cancels it: it stops at its next check, removes its temporary file and
    /// throws; the log is as it was, with every save.
    ///
    /// - Throws: ``EventGraphError`` with code `storeMismatch` when such a store is not mounted, or this store was
    ///   opened alone (compact it in its container); `conflict` when a save across stores came between that
    ///   decision and the moment the compaction took the state (compact again); `closed` when the container was
    ///   closed before or during it.
    @discardableResult
    public func compact() throws(EventGraphError) -> CompactionReport {
        try store.compact()
    }

    /// Closes the store: later saves fail. Objects already fetched keep their values.
    ///
    /// A compaction still running — an automatic checkpoint, or ``compact()`` on another thread — is cancelled, not
    /// waited for: it stops at its next check and leaves the log as it was, with every save acknowledged.
    ///
    /// The store file and its writer lock are released even when the close throws because an earlier write failed
    /// (a full disk, say): the store can then be opened again, in this process too, and recovers from the file.
    public func close() throws(EventGraphError) {
        // Every store is closed even when one fails; the first failure is reported.
        var failure: EventGraphError?
        for store in stores {
            do throws(EventGraphError) { try store.close() } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }
}

/// Holds the main context on the main actor.
@MainActor
private final class MainContextBox: Sendable {
    nonisolated let store: any ObjectStore
    private var created: ObjectContext?

    nonisolated init(store: any ObjectStore) {
        self.store = store
    }

    var context: ObjectContext {
        if let created { return created }
        let context = ObjectContext(parentStore: store, name: "main")
        // A main-actor context merges as transactions arrive, on the main actor (as Core Data's main-queue context
        // does), instead of waiting for a processing point the application may not reach until the next event.
        context.changeTracking.scheduleMerge = { [weak self] in
            Task { @MainActor in self?.created?.mergeCommittedTransactions() }
        }
        created = context
        return context
    }
}
