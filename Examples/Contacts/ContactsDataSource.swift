public import EventGraph
public import Foundation

/// Seed 002's stack (`LCoreDataController` with its data sources): a Root context that writes to the store, a
/// Main context for the UI as its child, and one Worker per data source as Main's child.
///
/// A worker parses its feed into its own context; ``merge(_:)`` pushes it into Main, ``discard(_:)`` drops it,
/// ``save()`` writes Main through Root to the log, and either way Main's results controller, sectioned by `lastNameInitial`, shows
/// the rows. The whole stack lives in one isolation domain (children stay in their parent's); only IDs and values
/// would cross to other domains.
public final class ContactsDataSource {
    /// The container whose store Root saves to.
    public let container: ModelContainer
    /// Writes to the store (the seed's background "Root" context).
    public let root: ObjectContext
    /// The UI's context, Root's child.
    public let main: ObjectContext
    /// Main's contacts, by last-name initial, then last and first name.
    public let contacts: FetchedResultsController<Contact>

    /// Opens the stack over `container` (whose model is ``ContactsModel/model``).
    public init(container: ModelContainer) throws(EventGraphError) {
        self.container = container
        root = container.newBackgroundContext(name: "root")
        main = root.makeChildContext(name: "main")
        let descriptor = FetchDescriptor<Contact>(
            sortBy: [SortDescriptor(\.lastName), SortDescriptor(\.firstName), SortDescriptor(\.email)])
        contacts = try FetchedResultsController(descriptor, in: main, sectionedBy: \.lastNameInitial)
    }

    /// A new worker for the data source `name`: Main's child, so it sees Main's contacts while it binds.
    public func makeWorker(for name: String) -> ObjectContext {
        main.makeChildContext(name: "worker.\(name)")
    }

    /// Parses a feed into a new worker and returns it, ready to be merged or discarded.
    ///
    /// - Throws: ``ContactsFeedError`` (line and column) when the feed is malformed; the worker that held the
    ///   partial import is dropped, so Main is untouched.
    public func importFeed(_ data: Data, source: String) throws(ContactsFeedError) -> ObjectContext {
        let worker = makeWorker(for: source)
        do {
            try ContactsParser.parse(data, source: source, into: worker)
        } catch {
            worker.rollback()
            throw error
        }
        return worker
    }

    /// Merges a worker into Main (nothing reaches the log yet) and returns how Main's contacts changed.
    @discardableResult
    public func merge(_ worker: ObjectContext) throws(EventGraphError) -> FetchedResultsDifference {
        precondition(worker.parentContext === main, "\(worker.name) is not a worker of this data source")
        try worker.save()
        return try contacts.processPendingChanges()
    }

    /// Saves Main through Root to the log (the seed's background persistence) and returns how Main's contacts
    /// changed meanwhile (rows that stay show as updated: their IDs became permanent).
    @discardableResult
    public func save() throws(EventGraphError) -> FetchedResultsDifference {
        try main.save()
        try root.save()
        return try contacts.processPendingChanges()
    }

    /// Drops a worker's changes; Main does not see them.
    public func discard(_ worker: ObjectContext) {
        precondition(worker.parentContext === main, "\(worker.name) is not a worker of this data source")
        worker.rollback()
    }
}
