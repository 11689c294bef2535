import LogFormat

/// What a store's commit lock protects: the saves queued in the log but not yet installed in the committed state,
/// and an overlay of their effects that later saves validate against.
///
/// A save is *queued* once its changeset is in the log writer's queue and *installed* once it is durable and its
/// rows are in ``StoreState`` (visible to every context). Between the two, the overlay answers "what is the newest
/// row of this key" and "who holds this unique value" as if the queued saves were installed, so conflicts,
/// upserts and uniqueness are checked against everything that precedes a save in the log.
struct CommitQueue {
    /// A queued save.
    struct Entry {
        var transactionID: UInt64
        var commitTimeMicroseconds: Int64
        var nextKey: UInt64
        var staged: StagedChanges
        var blobHandles: [UInt64]
        /// The unique tuples whose overlay entries it wrote.
        var uniqueKeys: [UniqueKey]
        /// The changeset as logged, published to observers when the save is installed.
        var changeset: Changeset
        /// The checkpoint chunks it changes, held decoded until it is installed (or dropped from the queue).
        var pins: ChunkPins? = nil
        /// For a save whose objects are all new, its rows' unique tuples and their holders, installed as they are
        /// (see ``StoreState/install(_:model:newTuples:)``).
        var newTuples: [UniqueKey: UInt64]? = nil
    }

    /// The holder of a unique tuple after the queued saves (`nil` when released) and the transaction that set it.
    struct OverlayHolder {
        var key: UInt64?
        var transactionID: UInt64
    }

    var isClosed = false
    /// Set when the log failed to make a queued save durable (the writer is then poisoned); every later save is
    /// refused until the store is reopened, which recovers the log.
    var failure: EventGraphError?
    /// The last transaction queued (or installed).
    var lastTransactionID: UInt64
    var lastCommitTimeMicroseconds: Int64
    /// Queued saves in transaction order.
    var queued: [Entry] = []
    var overlayHolders: [UniqueKey: OverlayHolder] = [:]

    init(lastTransactionID: UInt64, lastCommitTimeMicroseconds: Int64) {
        self.lastTransactionID = lastTransactionID
        self.lastCommitTimeMicroseconds = lastCommitTimeMicroseconds
    }

    /// The newest queued row of a key (`row` is `nil` when deleted) and its entity; `nil` when no queued save
    /// touches the key.
    ///
    /// Looked up in the queued saves' own staged changes, newest first (the queue is as long as the saves waiting
    /// for one sync): a bulk save copied every row into a dictionary of the queue and removed it again.
    func newestRow(ofKey key: UInt64) -> (entityIndex: Int, row: Row?)? {
        for entry in queued.reversed() {
            if let found = entry.staged[key] { return found }
        }
        return nil
    }

    /// The newest row of an object: queued, else committed.
    func row(entityIndex: Int, key: UInt64, in state: StoreState) -> Row? {
        if let found = newestRow(ofKey: key) { return found.entityIndex == entityIndex ? found.row : nil }
        return state.row(entityIndex: entityIndex, key: key)
    }

    /// The newest row of an object whose entity is one of `entityIndices`.
    func row(forKey key: UInt64, in entityIndices: [Int], state: StoreState) -> Row? {
        for index in entityIndices { if let row = row(entityIndex: index, key: key, in: state) { return row } }
        return nil
    }

    /// The newest holder of a unique tuple.
    ///
    /// - Throws: the error of a checkpoint chunk that the answer depends on and that cannot be loaded
    ///   (``StoreState/holder(of:)``).
    func holder(of tuple: UniqueKey, in state: StoreState) throws(EventGraphError) -> UInt64? {
        if let entry = overlayHolders[tuple] { return entry.key }
        return try state.holder(of: tuple)
    }

    /// The unique tuples that the objects a save changes hold now and give up (their newest rows' tuples, each
    /// where the object is the tuple's holder), for ``enqueue(_:releasing:claiming:)``: looked up while the save is
    /// prepared, when a lookup that reads a checkpoint chunk may still fail the save — once the changeset is in the
    /// log, nothing may.
    ///
    /// - Throws: the error of a checkpoint chunk that a holder lookup cannot load.
    func releasedTuples(of staged: StagedChanges, in state: StoreState, model: ObjectModel)
        throws(EventGraphError) -> [UniqueKey]
    {
        var released: [UniqueKey] = []
        for change in staged.changes where !model.entities[change.entityIndex].uniqueConstraints.isEmpty {
            guard let old = row(entityIndex: change.entityIndex, key: change.key, in: state) else { continue }
            for constraint in model.entities[change.entityIndex].uniqueConstraints {
                guard let tuple = UniqueKey(constraint, values: old.values),
                    try holder(of: tuple, in: state) == change.key
                else { continue }
                released.append(tuple)
            }
        }
        return released
    }

    /// Records a queued save's effects in the overlay (before anything of it is installed): the tuples its objects
    /// give up (``releasedTuples(of:in:model:)``, looked up when it was prepared), then those its new rows take
    /// (`claimed`: each tuple with the object that takes it, the table the save's uniqueness check built).
    ///
    /// The new rows' tuples used to be computed again here and inserted one by one; the check's table is taken
    /// whole when nothing else is queued (the usual case: its hash table is reused, not rebuilt).
    mutating func enqueue(_ entry: Entry, releasing released: [UniqueKey], claiming claimed: [UniqueKey: UInt64]) {
        var entry = entry
        let id = entry.transactionID
        entry.uniqueKeys.reserveCapacity(released.count + claimed.count)
        if overlayHolders.isEmpty {
            overlayHolders = claimed.mapValues { OverlayHolder(key: $0, transactionID: id) }
            // Released first: an object of the save that takes a tuple another one gives up holds it afterwards.
            for tuple in released where claimed[tuple] == nil {
                overlayHolders[tuple] = OverlayHolder(key: nil, transactionID: id)
            }
        } else {
            // Grown once for a large save, not by doubling (each doubling rehashes every entry so far).
            overlayHolders.reserveCapacity(overlayHolders.count + released.count + claimed.count)
            for tuple in released { overlayHolders[tuple] = OverlayHolder(key: nil, transactionID: id) }
            for (tuple, key) in claimed { overlayHolders[tuple] = OverlayHolder(key: key, transactionID: id) }
        }
        entry.uniqueKeys.append(contentsOf: released)
        entry.uniqueKeys.append(contentsOf: claimed.keys)
        queued.append(entry)
        lastTransactionID = id
        lastCommitTimeMicroseconds = entry.commitTimeMicroseconds
    }

    /// Removes and returns the queued saves up to `transactionID` (with them their rows leave the overlay), dropping
    /// the unique holders that only they wrote (the committed state holds them once the caller installs the saves).
    mutating func dequeue(through transactionID: UInt64) -> [Entry] {
        let count = queued.prefix { $0.transactionID <= transactionID }.count
        guard count > 0 else { return [] }
        let done = Array(queued[..<count])
        queued.removeFirst(count)
        if queued.isEmpty {
            overlayHolders.removeAll()
            return done
        }
        for entry in done {
            for tuple in entry.uniqueKeys where overlayHolders[tuple]?.transactionID == entry.transactionID {
                overlayHolders[tuple] = nil
            }
        }
        return done
    }
}
