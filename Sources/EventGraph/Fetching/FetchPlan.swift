import Foundation
import LogFormat

/// How one fetch runs: the entity family it reads, the filter on committed rows (a run-time filter and the parts of
/// a predicate that translate), what is left of the predicate for objects, and when a scan may stop.
struct FetchPlan<T: ManagedObject> {
    let descriptor: FetchDescriptor<T>
    let entity: EntityDescription
    /// The filter evaluated on committed rows (and on the unsaved values of changed objects).
    let filter: ResolvedFilter?
    /// The part of the predicate that did not translate into ``filter``, evaluated on objects.
    let predicate: Predicate<T>?
    /// The entities read: the entity and, unless excluded, its sub-entities.
    let familyIndices: [Int]
    let family: Set<Int>
    /// Whether the context's unsaved inserts, changes and deletes count.
    let includesPending: Bool
    /// How many results end a scan early: only without an order, when the window then ends there.
    let stopAt: Int?

    init(_ descriptor: FetchDescriptor<T>, entity: EntityDescription) throws(EventGraphError) {
        self.descriptor = descriptor
        self.entity = entity
        var predicate = descriptor.predicate
        var nodes: [ResolvedFilter.Node] = []
        if let filter = descriptor.filter { nodes.append(try ResolvedFilter(filter, entity: entity).root) }
        if let typed = predicate, let translation = PredicateTranslation(typed, entity: entity) {
            // The translated parts filter committed rows; an exact translation replaces the predicate.
            nodes.append(translation.node)
            if translation.isComplete { predicate = nil }
        }
        self.filter = nodes.isEmpty ? nil : ResolvedFilter(root: nodes.count == 1 ? nodes[0] : .and(nodes))
        self.predicate = predicate
        self.familyIndices = descriptor.includesSubentities ? entity.familyIndices : [entity.index]
        self.family = Set(familyIndices)
        self.includesPending = descriptor.includesPendingChanges
        self.stopAt =
            descriptor.sortBy.isEmpty && descriptor.sortKeys.isEmpty
            ? descriptor.fetchLimit.map { descriptor.fetchOffset + $0 } : nil
    }
}

/// What one fetch has collected so far: the accepted objects and what it examined.
struct FetchCollector<T: ManagedObject> {
    let plan: FetchPlan<T>
    private(set) var results: [T] = []
    var statistics = FetchStatistics()

    init(_ plan: FetchPlan<T>) {
        self.plan = plan
    }

    /// Whether the results fill the window of an unordered fetch, so the scan can stop.
    var isFull: Bool {
        guard let stopAt = plan.stopAt else { return false }
        return results.count >= stopAt
    }

    /// Adds an object that passed the filter, if it is a `T` and passes the rest of the predicate.
    mutating func accept(_ object: ManagedObject) throws(EventGraphError) {
        guard let typed = object as? T else { return }
        if let predicate = plan.predicate {
            do {
                guard try predicate.evaluate(typed) else { return }
            } catch {
                throw EventGraphError(.invalidArgument, "the predicate on \(plan.entity.name) failed: \(error)")
            }
        }
        results.append(typed)
    }

    /// Hands the results over in the descriptor's order, cut to its window (taken out, so that sorting does not
    /// copy them).
    mutating func takeOrderedWindow() -> [T] {
        var results: [T] = []
        swap(&results, &self.results)
        sort(&results)
        let descriptor = plan.descriptor
        if descriptor.fetchOffset > 0 { results.removeFirst(min(descriptor.fetchOffset, results.count)) }
        if let limit = descriptor.fetchLimit, results.count > limit { results.removeLast(results.count - limit) }
        return results
    }

    private func sort(_ results: inout [T]) {
        let descriptor = plan.descriptor
        guard !descriptor.sortBy.isEmpty || !descriptor.sortKeys.isEmpty else { return }
        let keys = descriptor.sortKeys.compactMap { key in
            plan.entity.attribute(named: key.attributeName).map { ($0.index, key.ascending) }
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
