import Foundation
import LogFormat
import Synchronization

/// The shared state of one store: the model, the log backend, and the committed snapshot of every object.
///
/// Contexts read rows under a short lock. Saves are validated and queued in the log under a commit lock, against
/// the committed state plus the saves queued before them (``CommitQueue``); each waits for durability outside the
/// lock, so concurrent saves share one sync (group commit), and the changesets are installed in transaction order
/// once durable: other contexts never see a save that might not survive a crash. Nothing awaits while a lock is
/// held; the commit lock is always taken before the state lock.
final class Store: Sendable {
    let model: ObjectModel
    let storeUUID: UUID
    let backend: any LogBackend
    let isReadOnly: Bool
    let state: LockedValue<StoreState>
    /// Serializes the validation and enqueueing of commits, their installation, compaction and close; waited on
    /// (``withDrainedQueue(_:)``) until no save is queued. Taken through ``withCommitLock(_:)``.
    let commitLock: ConditionLock<CommitQueue>
    /// Where installed transactions are published to observers (the one observation point).
    let observers: CommitObservers
    private let keyCounter: Atomic<UInt64>
    /// Advanced by every change to the state's entity versions (see ``TablesGeneration``): lookups by ID read a
    /// version they keep without the lock while it has not moved.
    let tablesGeneration = TablesGeneration()
    /// Serializes compactions (explicit ones and the automatic checkpoint), which run beside saves.
    let compactionLock = LockedValue<Void>(())
    /// Raised by ``close()``: the running compaction stops at its next check and no other starts.
    let closing = RewriteCancellation()
    /// Serializes named counters' reservations (see `Stores/Store+SequenceGenerator.swift`).
    let sequenceLock = LockedValue<Void>(())
    /// Whether a relationship of the model has an inverse (commits then keep both sides agreeing).
    let hasInverses: Bool
    /// Whether an entity of the model keeps large binary values apart from its rows (in blobs).
    let hasExternalStorage: Bool
    /// The transaction IDs the replayed log lacks (a salvage's gaps), for the recovery report.
    let transactionIDGaps: [ClosedRange<UInt64>]
    /// When the store rewrites its log as a checkpoint by itself (off until the container configures it).
    let automaticCheckpoint = AutomaticCheckpoint()
    /// The saves across stores its log records, which a compaction must let the other participants decide first.
    let crossStoreParts = CrossStoreParts()

    init(
        model: ObjectModel, backend: any LogBackend, state: StoreState, isReadOnly: Bool,
        transactionIDGaps: [ClosedRange<UInt64>] = []
    ) {
        self.model = model
        self.transactionIDGaps = transactionIDGaps
        self.backend = backend
        self.storeUUID = UUID(logUUID: backend.storeUUID)
        self.isReadOnly = isReadOnly
        self.keyCounter = Atomic(state.nextKey)
        self.hasInverses = InverseRepair.isNeeded(for: model)
        self.hasExternalStorage = model.entities.contains { !$0.externalStoragePropertyIndices.isEmpty }
        self.commitLock = ConditionLock(
            CommitQueue(
                lastTransactionID: state.lastTransactionID, lastCommitTimeMicroseconds: state.lastCommitTimeMicroseconds
            ))
        var state = state
        state.tablesGeneration = tablesGeneration
        self.state = LockedValue(state)
        self.observers = CommitObservers(model: model, storeUUID: storeUUID)
    }

    /// The committed row of an object: a handle on its chunk (see ``Row``), made from the entity's version after the
    /// lock is let go.
    func row(entityIndex: Int, key: UInt64) -> Row? {
        state.withLock { $0.version(ofEntity: entityIndex) }.rowHandle(forKey: key)
    }

    /// The committed row of an object whose entity is unknown (for example from an ``ObjectID`` of a sub-entity).
    func row(forKey key: UInt64, in entityIndices: [Int]) -> Row? {
        if entityIndices.count == 1 { return row(entityIndex: entityIndices[0], key: key) }
        let versions = state.withLock { state in entityIndices.map { state.version(ofEntity: $0) } }
        for version in versions { if let row = version.rowHandle(forKey: key) { return row } }
        return nil
    }

    /// A live object as a reader holds it (a slot of its chunk version, no ``Row``), found in the entity's version
    /// after the lock is let go.
    ///
    /// - Throws: the error of a checkpoint chunk that may hold the object and cannot be loaded (damaged, or its
    ///   reads kept failing): never `nil` then, which would make an object that exists look deleted.
    @inline(__always)
    func lookUpCommittedRow(entityIndex: Int, key: UInt64) throws(EventGraphError) -> CommittedRow? {
        // The shortest path, for a lookup by ID: the directory probe and the slot under the lock, when the chunk is
        // in memory (no I/O under the lock); else the version is taken and a chunk on disk read after the lock.
        switch state.withLock({ $0.committedRow(inMemoryForKey: key, entityIndex: entityIndex) }) {
        case .found(let row): return row
        case .absent: return nil
        case .mayBeOnDisk:
            return try state.withLock { $0.version(ofEntity: entityIndex) }.lookUpCommittedRow(forKey: key)
        }
    }

    /// ``lookUpCommittedRow(entityIndex:key:)`` for an object whose entity is one of some entities.
    func lookUpCommittedRow(forKey key: UInt64, in entityIndices: [Int]) throws(EventGraphError) -> CommittedRow? {
        if entityIndices.count == 1 { return try lookUpCommittedRow(entityIndex: entityIndices[0], key: key) }
        let versions = state.withLock { state in entityIndices.map { state.version(ofEntity: $0) } }
        for version in versions { if let row = try version.lookUpCommittedRow(forKey: key) { return row } }
        return nil
    }

    /// ``lookUpCommittedRow(entityIndex:key:)`` for a caller that cannot throw (a fault firing, a lookup by ID): a
    /// checkpoint chunk that may hold the object and cannot be loaded ends the process (Core Data's "could not
    /// fulfill a fault"), with a message naming the file, the entity, the chunk, its byte offset and the key.
    @inline(__always)
    func committedRow(entityIndex: Int, key: UInt64) -> CommittedRow? {
        do {
            return try lookUpCommittedRow(entityIndex: entityIndex, key: key)
        } catch {
            Self.failLookUp(key: key, error)
        }
    }

    /// ``committedRow(entityIndex:key:)`` for an object whose entity is one of some entities.
    func committedRow(forKey key: UInt64, in entityIndices: [Int]) -> CommittedRow? {
        do {
            return try lookUpCommittedRow(forKey: key, in: entityIndices)
        } catch {
            Self.failLookUp(key: key, error)
        }
    }

    /// Ends the process for a lookup by key that cannot be fulfilled (see ``committedRow(entityIndex:key:)``).
    @inline(never)
    static func failLookUp(key: UInt64, _ error: EventGraphError) -> Never {
        fatalError("EventGraph could not fulfill a lookup of the object with key \(key): \(error.message)")
    }

    /// The versions of some entities, taken under the lock: a scan reads their slots after it is let go, while
    /// commits may install newer versions.
    func entityVersions(of entityIndices: [Int]) -> [EntityColumns] {
        state.withLock { state in entityIndices.map { state.version(ofEntity: $0) } }
    }

    /// The slots of one entity whose values pass `filter`, plus those of `extraKeys`, in a version taken under the
    /// lock: the filter runs on its columns after the lock is let go.
    ///
    /// - Throws: the error of a checkpoint chunk that cannot be loaded: the filter would otherwise pass none of its
    ///   objects.
    func filteredSlots(entityIndex: Int, filter: ResolvedFilter, extraKeys: [UInt64])
        throws(EventGraphError) -> (EntityColumns, [Int])
    {
        let version = state.withLock { $0.version(ofEntity: entityIndex) }
        var slots = try version.slots(matching: filter)
        for key in extraKeys { if let slot = try version.lookUpSlot(forKey: key) { slots.append(slot) } }
        return (version, slots)
    }

    /// How many committed objects some entities have in all.
    func rowCount(of entityIndices: [Int]) -> Int {
        state.withLock { state in entityIndices.reduce(0) { $0 + state.objectCount(ofEntity: $1) } }
    }

    /// The slots of one entity that an attribute index finds for some value ranges, plus those of `extraKeys`, in
    /// the version taken with the lookup; `nil` when a scan is as cheap (see `StoreState.indexedRows`).
    ///
    /// - Throws: the error of a checkpoint chunk that cannot be loaded when the index is built from the entity's
    ///   chunks, or when it holds a key the index found (its object would otherwise look deleted).
    func indexedSlots(
        entityIndex: Int, ranges: [(propertyIndex: Int, range: IndexRange)], extraKeys: [UInt64], limitFraction: Int = 4
    ) throws(EventGraphError) -> (EntityColumns, [Int])? {
        try buildPendingAttributeIndexes(ofEntity: entityIndex)
        // The version and its indexes are taken under the lock; the search and the slots after it is let go (the
        // indexes are shared copy-on-write: a commit meanwhile copies what it changes, see `AttributeIndexLookup`).
        let (version, lookup) = state.withLock { state in
            (state.version(ofEntity: entityIndex), state.attributeIndexLookup(ofEntity: entityIndex))
        }
        guard let keys = lookup?.keys(in: ranges, appending: extraKeys, limitFraction: limitFraction) else {
            return nil
        }
        var slots: [Int] = []
        slots.reserveCapacity(keys.count)
        for key in keys { if let slot = try version.lookUpSlot(forKey: key) { slots.append(slot) } }
        return (version, slots)
    }

    /// The holder of a unique value tuple.
    ///
    /// - Throws: the error of a checkpoint chunk that cannot be loaded when the uniqueness entries are built from
    ///   the entity's chunks, or a stored index is rebuilt from them, or it holds a key the index found.
    func holder(of tuple: UniqueKey) throws(EventGraphError) -> UInt64? {
        try buildPendingUniqueEntries(for: [tuple.entityIndex])
        // The changes since the checkpoint and the stored indexes to read are taken under the lock; the stored
        // indexes are read (and one found damaged rebuilt from the entity's chunks) after it is let go.
        let (holder, lookups) = state.withLock { state in
            let holder = state.uniqueIndex[tuple]
            return (
                holder, holder != nil || state.storedUniqueIndexes.isEmpty ? [] : state.storedUniqueLookups(of: tuple)
            )
        }
        if let holder { return holder }
        guard !lookups.isEmpty else { return nil }
        return try StoreState.readStoredUniqueLookups(lookups, of: tuple)
    }

    /// Allocates a key; keys are never reused, even when the object is never saved.
    ///
    /// The counter starts at the `nextKey` recorded in the log, which may be anywhere up to the largest value.
    /// It never wraps: once every key is handed out, it returns ``exhaustedKey`` (never a real key), and a save
    /// that inserts an object with it fails with a "store is full" error. Inserting cannot throw, so the error
    /// waits for the save.
    func reserveKey() -> UInt64 {
        var current = keyCounter.load(ordering: .relaxed)
        while current < Self.exhaustedKey {
            let (exchanged, original) = keyCounter.compareExchange(
                expected: current, desired: current + 1, ordering: .relaxed)
            if exchanged { return current }
            current = original
        }
        return Self.exhaustedKey
    }

    /// The key ``reserveKey()`` returns when none is left; the key counter never passes it.
    static let exhaustedKey = UInt64.max

    /// The object an operation inserts with a key that was never really allocated, if it does.
    static func exhaustedInsert(_ operation: ChangeOperation) -> ObjectReference? {
        if case .insert(let reference, _) = operation, reference.key == exhaustedKey { reference } else { nil }
    }

    /// The counter's value: every key below it has been handed out.
    var keyWatermark: UInt64 { keyCounter.load(ordering: .relaxed) }

    var lastTransactionID: UInt64 { state.withLock { $0.lastTransactionID } }

    /// Reads an externally stored value; `nil` when the log no longer holds it: a compaction dropped it because no
    /// live object references it any more (the caller read an older row of the object).
    func readBlob(_ reference: BlobReference) throws(EventGraphError) -> [UInt8]? {
        let key = BlobKey(transactionID: reference.transactionID, index: reference.index)
        // Each pass that finds its handle stale follows a compaction that installed fresh handles before readers
        // could see the new file, so the next lookup is current; only another compaction can intervene.
        while true {
            let found = state.withLock { state in state.blobHandles[key].map { ($0, state.blobGeneration) } }
            guard let (handle, generation) = found else { return nil }
            if let bytes = try backend.readBlob(key, at: handle, generation: generation) { return bytes }
        }
    }

    /// Closes the backend once every queued save has finished; later commits fail.
    ///
    /// A compaction running then — the automatic checkpoint or an explicit ``compact(keepingPreviousAt:verifyingByReplay:)``
    /// on another thread — is cancelled, not waited out: it stops at its next check (between its stages, between
    /// batches of chunks, between objects of its digest), removes its temporary file and leaves the old log,
    /// untouched and still the store's, with every save; an explicit compaction throws ``EventGraphError/Code/closed``.
    /// (It would fail with that error anyway when it came to swap its file into a closed store.) Close waits only for
    /// it to stop, so the time a close takes no longer grows with the store. One that has renamed its file already
    /// is complete and stays.
    func close() throws(EventGraphError) {
        closing.cancel()
        automaticCheckpoint.stop()
        // An explicit compaction on another thread holds the lock until it has stopped and removed its file.
        compactionLock.withLock { _ in }
        try withDrainedQueue { queue throws(EventGraphError) in
            guard !queue.isClosed else { return }
            queue.isClosed = true
            try backend.close()
        }
    }

    /// Runs `body` under the commit lock once no save is queued (between the enqueue and the install of a save,
    /// the log holds a transaction the committed state lacks). Each queued save's own thread installs or drops it
    /// and, through ``withCommitLock(_:)``, wakes this wait when the queue is empty.
    func withDrainedQueue<R>(_ body: (inout CommitQueue) throws(EventGraphError) -> R) throws(EventGraphError) -> R {
        try commitLock.withLock { (locked: inout ConditionLock<CommitQueue>.Locked) throws(EventGraphError) -> R in
            locked.wait(until: { $0.queued.isEmpty })
            return try body(&locked.value)
        }
    }

    /// Runs `body` under the commit lock; wakes the threads waiting in ``withDrainedQueue(_:)`` when `body` leaves
    /// the queue empty (a save installed or dropped the last queued save).
    func withCommitLock<R, E: Error>(_ body: (inout CommitQueue) throws(E) -> R) throws(E) -> R {
        try commitLock.withLock { (locked: inout ConditionLock<CommitQueue>.Locked) throws(E) -> R in
            let hadQueued = !locked.value.queued.isEmpty
            defer { if hadQueued && locked.value.queued.isEmpty { commitLock.broadcast() } }
            return try body(&locked.value)
        }
    }

    static func nowMicroseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1_000_000).rounded())
    }
}
