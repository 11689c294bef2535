import Foundation
import LogFormat

/// How one fetch runs: the entity family it reads, the filter on committed rows (a run-time filter and the parts of
/// a predicate that translate), what is left of the predicate for objects, and when a scan may stop.
struct FetchPlan<T: ManagedObject> {
    let descriptor: FetchDescriptor<T>
    /// What the scan of committed rows needs, without `T`: the per-row work runs outside generic code (generic
    /// code instantiated the metadata of the collector's type for every row it examined).
    let scope: FetchScope
    /// The part of the predicate that did not translate into ``filter``, evaluated on objects.
    let predicate: Predicate<T>?

    var entity: EntityDescription { scope.entity }
    /// The filter evaluated on committed rows (and on the unsaved values of changed objects).
    var filter: ResolvedFilter? { scope.filter }
    /// The entities read: the entity and, unless excluded, its sub-entities.
    var familyIndices: [Int] { scope.familyIndices }
    var family: Set<Int> { scope.family }
    /// Whether the context's unsaved inserts, changes and deletes count.
    var includesPending: Bool { scope.includesPending }

    init(_ descriptor: FetchDescriptor<T>, entity: EntityDescription, model: ObjectModel) throws(EventGraphError) {
        self.descriptor = descriptor
        var predicate = descriptor.predicate
        var nodes: [ResolvedFilter.Node] = []
        if let filter = descriptor.filter { nodes.append(try ResolvedFilter(filter, entity: entity).root) }
        if let typed = predicate, let translation = PredicateTranslation(typed, entity: entity) {
            // The translated parts filter committed rows; an exact translation replaces the predicate.
            nodes.append(translation.node)
            if translation.isComplete { predicate = nil }
        }
        self.predicate = predicate
        let familyIndices = descriptor.includesSubentities ? entity.familyIndices : [entity.index]
        var objectCheck: ((ManagedObject) throws(EventGraphError) -> Bool)?
        if let predicate {
            objectCheck = { object throws(EventGraphError) in
                guard let typed = object as? T else { return false }
                do {
                    return try predicate.evaluate(typed)
                } catch {
                    throw EventGraphError(.invalidArgument, "the predicate on \(entity.name) failed: \(error)")
                }
            }
        } else if !familyIndices.allSatisfy({ model.entities[$0].objectClass is T.Type }) {
            objectCheck = { $0 is T }
        }
        scope = FetchScope(
            entity: entity,
            filter: nodes.isEmpty ? nil : ResolvedFilter(root: nodes.count == 1 ? nodes[0] : .and(nodes)),
            familyIndices: familyIndices, family: Set(familyIndices),
            includesPending: descriptor.includesPendingChanges,
            stopAt: descriptor.sortBy.isEmpty && descriptor.sortKeys.isEmpty
                ? descriptor.fetchLimit.map { descriptor.fetchOffset + $0 } : nil,
            objectCheck: objectCheck)
    }

    /// The collected objects as `T`s, in the descriptor's order, cut to its window (taken out of the collector, so
    /// that sorting does not copy them).
    func takeOrderedWindow(_ collector: inout FetchCollector) -> [T] {
        var results = Self.typed(collector.takeResults())
        sort(&results)
        if descriptor.fetchOffset > 0 { results.removeFirst(min(descriptor.fetchOffset, results.count)) }
        if let limit = descriptor.fetchLimit, results.count > limit { results.removeLast(results.count - limit) }
        return results
    }

    /// The collected objects as an array of `T`, the same array: every collected object is a `T` (the scope's
    /// ``FetchScope/objectCheck`` accepts only `T`s, and is `nil` only when every class of the family is `T` or a
    /// subclass of it). Copied into a new `[T]`, each object took a dynamic cast, a retain and a release (their
    /// arrays' teardown included, 4 % of a fetch that reads every post in h71's profile).
    ///
    /// An array of class references has the same layout whatever its element class, and its storage releases its
    /// elements the same way, so the array is reinterpreted as it is (what the standard library's own array casts
    /// do where elements are known to be of the target class: `_ContiguousArrayBuffer.cast(toBufferOf:)`).
    private static func typed(_ objects: [ManagedObject]) -> [T] {
        assert(objects.allSatisfy { $0 is T }, "a fetch collected an object that is not a \(T.self)")
        return unsafeBitCast(objects, to: [T].self)
    }

    private func sort(_ results: inout [T]) {
        guard !descriptor.sortBy.isEmpty || !descriptor.sortKeys.isEmpty else { return }
        let keys = descriptor.sortKeys.compactMap { key in
            entity.attribute(named: key.attributeName).map { ($0.index, key.ascending) }
        }
        results.sort { a, b in
            for comparator in descriptor.sortBy {
                switch comparator.compare(a, b) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            for (index, ascending) in keys {
                let x = a.fetchedAttributeValue(at: index)
                let y = b.fetchedAttributeValue(at: index)
                switch x.compare(to: y) {
                case .orderedAscending: return ascending
                case .orderedDescending: return !ascending
                default: continue
                }
            }
            return false
        }
    }
}

/// The part of a ``FetchPlan`` that does not depend on its class.
struct FetchScope {
    let entity: EntityDescription
    let filter: ResolvedFilter?
    let familyIndices: [Int]
    let family: Set<Int>
    let includesPending: Bool
    /// How many results end a scan early: only without an order, when the window then ends there.
    let stopAt: Int?
    /// Whether an object that passed the filter is a result: it is of the plan's class and passes what is left of
    /// the predicate. `nil` when every object of the family passes (no predicate is left, and every entity's class
    /// is the plan's class or a subclass of it).
    let objectCheck: ((ManagedObject) throws(EventGraphError) -> Bool)?
}

/// What one fetch has collected so far: the accepted objects and what it examined.
struct FetchCollector {
    let scope: FetchScope
    private var results: [ManagedObject] = []
    var statistics = FetchStatistics()

    init<T>(_ plan: FetchPlan<T>) {
        self.scope = plan.scope
    }

    /// Whether the results fill the window of an unordered fetch, so the scan can stop.
    var isFull: Bool {
        guard let stopAt = scope.stopAt else { return false }
        return results.count >= stopAt
    }

    /// The first object accepted.
    var first: ManagedObject? { results.first }

    /// Adds an object that passed the filter, if it is of the plan's class and passes the rest of the predicate.
    /// Adds an object to the results, unless the scope's check refuses it. The object is taken (`consuming`): the
    /// caller's reference to a new fault moves into the results, without a retain and a release per object.
    mutating func accept(_ object: consuming ManagedObject) throws(EventGraphError) {
        if let check = scope.objectCheck, try !check(object) { return }
        results.append(consume object)
    }

    /// Makes room for `count` more results (a scan that accepts every row it examines).
    mutating func reserveCapacity(_ count: Int) {
        results.reserveCapacity(results.count + count)
    }

    /// Hands the results over (the collector keeps none).
    mutating func takeResults() -> [ManagedObject] {
        var taken: [ManagedObject] = []
        swap(&taken, &results)
        return taken
    }
}

extension ManagedObject {
    /// An attribute's value as fetches order by it. An inserted object holds nothing for an attribute it never set
    /// (a child's pushed insert carries only the values that differ from the default), so it has the model's
    /// default: reading `.null` instead would sort it before every other object.
    final func fetchedAttributeValue(at index: Int) -> AttributeValue {
        if let value = storedAttributeValue(at: index) { return value }
        if case .attribute(let value) = entity.defaultValues[index] { return value }
        return .null
    }
}
