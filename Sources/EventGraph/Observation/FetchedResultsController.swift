import LogFormat

/// One section of a ``FetchedResultsController``'s results.
public struct FetchedResultsSection<T: ManagedObject> {
    /// The section value as text (empty when the results have no sections).
    public var name: String
    /// The section's objects, in the descriptor's order.
    public var objects: [T]
}

/// The results of a fetch on a context, kept current as contexts save, with each change reported as a
/// ``FetchedResultsDifference`` (what `NSFetchedResultsController` does for a table view).
///
/// The controller lives in its context's isolation domain. It follows two sources: committed transactions (a save
/// of any root context of the container, from any thread), queued as they are delivered, and its context's own
/// reports (``ObjectContext/observeChanges(_:)``: its unsaved changes, a child context's push into it, a rollback).
/// ``processPendingChanges()`` applies both in this domain and returns the difference. A save on the controller's own thread is queued before it returns,
/// so calling ``processPendingChanges()`` right after it sees it; saves elsewhere can ask to be told through
/// ``whenChangesArrive(_:)``.
///
/// The cost of a batch is proportional to the objects it changed, not to the results: each changed object is
/// evaluated once against the descriptor in the context's view and moved by binary search, using the key every
/// result had when it was placed. The order is the section attribute (when sectioned), then the descriptor's sort
/// attributes, then creation order; a window (`fetchLimit`, `fetchOffset`) is not supported, since it would make
/// one change shift rows in and out at the window's edges.
///
/// One cost is not proportional to the change: each section keeps its rows in one array, so a row that arrives,
/// leaves or moves shifts the rows after it in its section (a `memmove` of up to the section's size: about 0.1 ms
/// for a section of 38,000 rows, 1M results over 26 sections; an unsectioned controller over 1M results moves 1M
/// entries' worth of memory). The comparisons and evaluations stay proportional to the change.
///
/// ```swift
/// var descriptor = FetchDescriptor<Contact>(sortBy: [SortDescriptor(\.lastName)])
/// let controller = try FetchedResultsController(descriptor, in: main, sectionedBy: \.lastNameInitial)
/// try root.save()
/// let difference = try controller.processPendingChanges()
/// tableView.apply(difference.insertedRows.map(\.indexPath))
/// ```
public final class FetchedResultsController<T: ManagedObject> {
    /// The context the results are fetched in.
    public let context: ObjectContext
    /// What the results are.
    public let descriptor: FetchDescriptor<T>
    let plan: FetchPlan<T>
    let order: FetchedResultsOrder
    var sections: [ResultsSectionRows<T>] = []
    /// The key each result was placed with: membership, and where to find it after its values changed.
    var keys: [ObjectIdentity: ResultsSortKey] = [:]
    /// Work counters, for tests of the cost bound.
    var statistics = FetchedResultsStatistics()
    private let inbox: FetchedResultsInbox
    private let observations: [(store: Store, token: CommitObservers.Token)]
    /// The context's own reports (its unsaved changes, a child's push, a rollback), for objects that change
    /// before anything is committed.
    private var contextObservation: ContextChangesObservation?
    /// Objects the context reported since the last batch, each once, in the order reported.
    private var contextChanged: (order: [ObjectIdentity], seen: Set<ObjectIdentity>) = ([], [])
    /// Results the context renamed since the last batch (a root's save merged an upserted object into a committed
    /// one), new identity → the one the result was placed with.
    private var renamedResults: [ObjectIdentity: ObjectIdentity] = [:]
    private var renameRegistration: Int?

    /// Called by ``processPendingChanges()`` with each non-empty difference, in the context's domain.
    public var onChange: ((FetchedResultsDifference) -> Void)?

    /// Fetches the results of `descriptor` in `context` and starts following the container's saves.
    ///
    /// - Throws: ``EventGraphError`` with code `invalidArgument` when the descriptor has a window, sorts by
    ///   something other than a stored attribute, or names no entity of the model.
    public convenience init(_ descriptor: FetchDescriptor<T>, in context: ObjectContext) throws(EventGraphError) {
        try self.init(descriptor, in: context, sectionIndex: nil)
    }

    /// Fetches sectioned results: one section per value of the attribute `keyPath` names, sections in ascending
    /// order of that value.
    public convenience init<Value>(
        _ descriptor: FetchDescriptor<T>, in context: ObjectContext, sectionedBy keyPath: KeyPath<T, Value>
    ) throws(EventGraphError) {
        guard let index = FetchedResultsOrder.attributeIndex(of: keyPath as PartialKeyPath<T>) else {
            throw EventGraphError(
                .invalidArgument, "results can be sectioned by a stored attribute only, not \(keyPath)")
        }
        try self.init(descriptor, in: context, sectionIndex: index)
    }

    /// Fetches sectioned results by an attribute's name (the dynamic API).
    public convenience init(
        _ descriptor: FetchDescriptor<T>, in context: ObjectContext, sectionedByAttribute name: String
    ) throws(EventGraphError) {
        let plan = try FetchPlan(descriptor, entity: try context.resolveEntity(descriptor), model: context.model)
        guard let attribute = plan.entity.attribute(named: name) else {
            throw EventGraphError(.invalidArgument, "\(plan.entity.name) has no attribute '\(name)' to section by")
        }
        try self.init(descriptor, in: context, sectionIndex: attribute.index)
    }

    private init(_ descriptor: FetchDescriptor<T>, in context: ObjectContext, sectionIndex: Int?)
        throws(EventGraphError)
    {
        let entity = try context.resolveEntity(descriptor)
        guard descriptor.fetchLimit == nil, descriptor.fetchOffset == 0 else {
            throw EventGraphError(
                .invalidArgument,
                "a results controller on \(entity.name) cannot keep a window (fetchLimit, fetchOffset)")
        }
        self.context = context
        self.descriptor = descriptor
        plan = try FetchPlan(descriptor, entity: entity, model: context.model)
        order = try FetchedResultsOrder(descriptor, entity: entity, sectionIndex: sectionIndex)
        // Registered before the fetch: a transaction committed in between is applied again, which changes nothing.
        let inbox = FetchedResultsInbox()
        self.inbox = inbox
        observations = context.rootStores.map { store in
            (store, store.observeCommits { transaction in inbox.receive(transaction) }.0)
        }
        try load()
        // Reports run synchronously in the context's domain, in the middle of a save or a child's push: they are
        // only noted here and applied by the next `processPendingChanges()`.
        contextObservation = context.observeChanges { [weak self] changes in self?.note(changes) }
        renameRegistration = context.changeTracking.addRenameObserver { [weak self] renamed in
            self?.noteRenamed(renamed)
        }
    }

    deinit {
        for (store, token) in observations { store.removeCommitObserver(token) }
        if let renameRegistration { context.changeTracking.removeRenameObserver(renameRegistration) }
    }

    // MARK: - Reading

    /// The sections, each with its objects, in order.
    public var fetchedSections: [FetchedResultsSection<T>] {
        sections.map { FetchedResultsSection(name: $0.name, objects: $0.entries.map(\.object)) }
    }

    /// Every result in order, across sections.
    public var fetchedObjects: [T] { sections.flatMap { $0.entries.map(\.object) } }

    /// The object IDs of every section, in order (what ``FetchedResultsDifference/applied(to:)`` takes).
    public var objectIDs: [[ObjectID]] {
        sections.map { section in section.entries.map(\.object.objectID) }
    }

    /// How many sections there are.
    public var sectionCount: Int { sections.count }

    /// How many rows a section has.
    public func rowCount(inSection section: Int) -> Int { sections[section].entries.count }

    /// The object at an index path.
    public func object(at indexPath: ResultsIndexPath) -> T {
        sections[indexPath.section].entries[indexPath.row].object
    }

    /// Where an object is in the results, found by binary search; `nil` when it is not among them.
    public func indexPath(of object: T) -> ResultsIndexPath? {
        guard let key = keys[object.identity] else { return nil }
        return position(of: key)
    }

    // MARK: - Following changes

    /// Asks to be told when committed transactions wait for ``processPendingChanges()``.
    ///
    /// `handler` runs on the thread that delivers the transaction (outside every lock), not in the context's
    /// domain: it should only schedule ``processPendingChanges()`` there, e.g. `Task { @MainActor in … }`.
    public func whenChangesArrive(_ handler: @escaping @Sendable () -> Void) {
        inbox.setWakeUp(handler)
    }

    /// Applies every transaction committed since the last call and returns how the results changed.
    ///
    /// Every object a transaction inserted, updated or deleted is evaluated once, in the context's view (its
    /// unsaved changes count when the descriptor includes them), and moved into or out of its place.
    @discardableResult
    public func processPendingChanges() throws(EventGraphError) -> FetchedResultsDifference {
        // The context reports the changes made in it directly since its last report (into `note(_:)`).
        context.processPendingChanges()
        var (changed, seen) = contextChanged
        contextChanged = ([], [])
        for transaction in inbox.take() {
            for change in transaction.changes {
                guard let identity = identity(of: change.objectID), seen.insert(identity).inserted else { continue }
                changed.append(identity)
            }
        }
        let renamed = renamedResults
        renamedResults = [:]
        for new in renamed.keys where seen.insert(new).inserted { changed.append(new) }
        let difference = try apply(changed, renamed: renamed)
        if !difference.isEmpty { onChange?(difference) }
        return difference
    }

    /// Notes the objects of one of the context's reports that may be results.
    private func note(_ changes: ContextChanges) {
        for change in changes.changes {
            guard let identity = identity(of: change.objectID), contextChanged.seen.insert(identity).inserted
            else { continue }
            contextChanged.order.append(identity)
        }
    }

    /// Notes results whose object the context now holds under another identity: the next batch moves each from
    /// the place of its old identity (identities break ties in the order) and reports it under its new ID.
    private func noteRenamed(_ renamed: [ObjectIdentity: ObjectIdentity]) {
        for (old, new) in renamed {
            // A result renamed twice before a batch is still placed with its first identity.
            let placed = renamedResults.removeValue(forKey: old) ?? old
            guard keys[placed] != nil else { continue }
            renamedResults[new] = placed
        }
    }

    /// The identity of an object of the descriptor's entities, in the context's table of stores.
    private func identity(of objectID: ObjectID) -> ObjectIdentity? {
        guard let entity = context.model.entity(named: objectID.entityName), plan.family.contains(entity.index),
            let storeIndex = context.parentStore.storeIndex(of: objectID.storeUUID)
        else { return nil }
        return ObjectIdentity(storeIndex: storeIndex, key: objectID.key)
    }

    /// Fetches the results afresh (after ``ObjectContext/reset()``, say) and drops the transactions waiting.
    public func refetch() throws(EventGraphError) {
        _ = inbox.take()
        contextChanged = ([], [])
        renamedResults = [:]
        try load()
    }

    private func load() throws(EventGraphError) {
        let objects = try context.fetch(descriptor)
        var entries = objects.map { ResultsEntry(object: $0, key: order.key(of: $0)) }
        entries.sort { order.precedes($0.key, $1.key) }
        sections = []
        keys = [:]
        for entry in entries {
            keys[entry.key.identity] = entry.key
            let value = order.sectionValue(of: entry.key)
            if let last = sections.last, order.sameSection(last.value, value) {
                sections[sections.count - 1].entries.append(entry)
            } else {
                sections.append(ResultsSectionRows(value: value, entries: [entry]))
            }
        }
    }
}

/// A result and the key it was placed with.
struct ResultsEntry<T: ManagedObject> {
    var object: T
    var key: ResultsSortKey
}

/// The rows of one section.
struct ResultsSectionRows<T: ManagedObject> {
    var value: AttributeValue
    var entries: [ResultsEntry<T>]
    var name: String { FetchedResultsOrder.sectionName(value) }
}

/// What a results controller did, for tests of its cost bound.
struct FetchedResultsStatistics {
    /// Objects evaluated against the descriptor (each changed object once per batch).
    var objectsEvaluated = 0
    /// Key comparisons made by binary searches.
    var comparisons = 0
}

/// Committed transactions delivered to a controller and not yet processed: the one part of a controller that
/// other threads touch.
private final class FetchedResultsInbox: Sendable {
    private struct State: Sendable {
        var transactions: [CommittedTransaction] = []
        var wakeUp: (@Sendable () -> Void)?
    }

    private let state = LockedValue(State())

    func receive(_ transaction: CommittedTransaction) {
        let wakeUp = state.withLock { state in
            state.transactions.append(transaction)
            return state.wakeUp
        }
        wakeUp?()
    }

    func take() -> [CommittedTransaction] {
        state.withLock { state in
            defer { state.transactions = [] }
            return state.transactions
        }
    }

    func setWakeUp(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.wakeUp = handler }
    }
}

extension ObjectContext {
    /// The stores beneath the root of this context's tree, whose commits every context of the tree sees: the
    /// container's store, or each mounted store of a container with several.
    var rootStores: [Store] {
        var store = parentStore
        while let parent = store as? ParentContextStore { store = parent.parent.parentStore }
        if let single = store as? Store { return [single] }
        return (store as? StoreCoordinator)?.stores ?? []
    }
}
