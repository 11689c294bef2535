public import Foundation

/// What to fetch: an entity (the class `T`, or a name for the dynamic API), a filter, an order and a window.
///
/// ```swift
/// var descriptor = FetchDescriptor<Post>(predicate: #Predicate { $0.identity > 10 }, sortBy: [SortDescriptor(\.title)])
/// descriptor.fetchLimit = 20
/// let posts = try context.fetch(descriptor)
/// ```
public struct FetchDescriptor<T: ManagedObject> {
    /// A typed predicate. Comparisons of stored attributes with constants (`==`, `!=`, `<`, `<=`, `>`, `>=`, `&&`,
    /// a string's `contains` and `starts(with:)`) are evaluated on committed rows and can use indexes; anything
    /// else is evaluated on objects (created for the rows it examines).
    public var predicate: Predicate<T>?
    /// A run-time filter, evaluated on committed rows before any object is created; `==`, `<`, `<=`, `>`, `>=` on
    /// an indexed attribute (alone or in a conjunction) read only the rows the index finds.
    public var filter: FetchFilter?
    /// The order of results.
    public var sortBy: [SortDescriptor<T>]
    /// An order by attribute names (after ``sortBy``), for the dynamic API.
    public var sortKeys: [SortKey] = []
    /// At most this many results.
    public var fetchLimit: Int?
    /// Skip this many results first.
    public var fetchOffset: Int = 0
    /// Whether objects of sub-entities are included (default `true`).
    public var includesSubentities = true
    /// Whether the context's unsaved inserts, changes and deletes are taken into account (default `true`).
    public var includesPendingChanges = true
    /// The entity by name, when `T` is ``ManagedObject`` itself (the dynamic API).
    public var entityName: String?

    /// Describes a fetch of `T` objects.
    public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
    }

    /// Describes a fetch of `T` objects with a run-time filter.
    public init(filter: FetchFilter?, sortBy: [SortDescriptor<T>] = []) {
        self.filter = filter
        self.sortBy = sortBy
    }
}

extension FetchDescriptor where T == ManagedObject {
    /// Describes a fetch by entity name (the dynamic API).
    public init(entityName: String, filter: FetchFilter? = nil, sortKeys: [SortKey] = []) {
        self.init(filter: filter)
        self.entityName = entityName
        self.sortKeys = sortKeys
    }
}

/// What the last fetch of a context did, for tests and tuning.
struct FetchStatistics: Sendable {
    /// How many committed rows the context examined (evaluated or materialized). Rows that a store's column scan
    /// rejected before handing them over are not counted: a filter the store evaluates on its columns examines
    /// only its matches here, index or not (``usedIndex`` tells the two apart).
    var rowsExamined = 0
    /// How many committed rows the filter was evaluated on (rows an index answered exactly are not).
    var rowsFiltered = 0
    /// Whether an index (attribute or uniqueness) chose the rows instead of a full scan. An attribute index is
    /// passed over when its ranges hold more than a quarter of the entity's objects (and at least 16): a scan of
    /// the columns is then as cheap (``AttributeIndexLookup/keys(in:appending:limitFraction:)``).
    var usedIndex = false
}
