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
/// The controller lives in its context's isolation domain. Committed transactions (a save of any root context of
/// the container, from any thread) are queued as they are delivered; ``processPendingChanges()`` applies them in
/// this domain and returns the difference. A save on the controller's own thread is queued before it returns,
/// so calling ``processPendingChanges()`` right after it sees it; saves elsewhere can ask to be told through
/// ``whenChangesArrive(_:)``.
///
/// The cost of a batch is proportional to the objects it changed, not to the results: each changed object is
/// evaluated once against the descriptor in the context's view and moved by binary search, using the key every
/// result had when it was placed. The order is the section attribute (when sectioned), then the descriptor's sort
/// attributes, then creation order; a window (`fetchLimit`, `fetchOffset`) is not supported, since it would make
/// one change shift rows in and out at the window's edges.
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
    private let observation: (store: Store, token: CommitObservers.Token)?

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
        let plan = try FetchPlan(descriptor, entity: try context.resolveEntity(descriptor))
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
        plan = try FetchPlan(descriptor, entity: entity)
        order = try FetchedResultsOrder(descriptor, entity: entity, sectionIndex: sectionIndex)
        // Registered before the fetch: a transaction committed in between is applied again, which changes nothing.
        let inbox = FetchedResultsInbox()
        self.inbox = inbox
        if let store = context.rootStore {
            let (token, _) = store.observeCommits { transaction in inbox.receive(transaction) }
            observation = (store, token)
        } else {
            observation = nil
        }
        try load()
    }

    deinit {
        if let observation { observation.store.removeCommitObserver(observation.token) }
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
        let transactions = inbox.take()
        var seen: Set<ObjectIdentity> = []
        var changed: [ObjectIdentity] = []
        for transaction in transactions {
            for change in transaction.changes {
                guard let entity = context.model.entity(named: change.objectID.entityName),
                    plan.family.contains(entity.index),
                    let storeIndex = context.parentStore.storeIndex(of: change.objectID.storeUUID)
                else { continue }
                let identity = ObjectIdentity(storeIndex: storeIndex, key: change.objectID.key)
                if seen.insert(identity).inserted { changed.append(identity) }
            }
        }
        let difference = try apply(changed)
        if !difference.isEmpty { onChange?(difference) }
        return difference
    }

    /// Fetches the results afresh (after ``ObjectContext/reset()``, say) and drops the transactions waiting.
    public func refetch() throws(EventGraphError) {
        _ = inbox.take()
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
    /// The store beneath the root of this context's tree, whose commits every context of the tree sees.
    var rootStore: Store? {
        var store = parentStore
        while let parent = store as? ParentContextStore { store = parent.parent.parentStore }
        return store as? Store
    }
}
