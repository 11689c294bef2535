import Foundation
import LogFormat
import Synchronization

extension ObjectContext {
    /// Fetches the objects a descriptor describes. Results are faults that fire on first read.
    ///
    /// Committed rows are scanned from the store's snapshot (objects without unsaved changes are brought up
    /// to date); the context's unsaved inserts are included and its unsaved deletes excluded.
    public func fetch<T: ManagedObject>(_ descriptor: FetchDescriptor<T>) throws(EventGraphError) -> [T] {
        let entity = try resolveEntity(descriptor)
        var predicate = descriptor.predicate
        var nodes: [ResolvedFilter.Node] = []
        if let filter = descriptor.filter { nodes.append(try ResolvedFilter(filter, entity: entity).root) }
        if let typed = predicate, let translation = PredicateTranslation(typed, entity: entity) {
            // The translated parts filter committed rows; an exact translation replaces the predicate.
            nodes.append(translation.node)
            if translation.isComplete { predicate = nil }
        }
        let filter = nodes.isEmpty ? nil : ResolvedFilter(root: nodes.count == 1 ? nodes[0] : .and(nodes))
        let familyIndices = descriptor.includesSubentities ? entity.familyIndices : [entity.index]
        let family = Set(familyIndices)
        let pending = descriptor.includesPendingChanges
        var results: [T] = []
        var statistics = FetchStatistics()
        func accept(_ object: ManagedObject) throws(EventGraphError) {
            guard let typed = object as? T else { return }
            if let predicate {
                do {
                    guard try predicate.evaluate(typed) else { return }
                } catch {
                    throw EventGraphError(.invalidArgument, "the predicate on \(entity.name) failed: \(error)")
                }
            }
            results.append(typed)
        }
        // Without an order, the window can end the scan early.
        let stopAt = descriptor.sortBy.isEmpty && descriptor.sortKeys.isEmpty
            ? descriptor.fetchLimit.map { descriptor.fetchOffset + $0 } : nil
        /// Considers one committed row; returns false once the window is full.
        func consider(_ row: Row) throws(EventGraphError) -> Bool {
            if let stopAt, results.count >= stopAt { return false }
            statistics.rowsExamined += 1
            if let registered = registered[row.key], pending, !registered.pending.isEmpty || registered.flags.contains(.isDeleted) {
                // The context's own view of a changed object wins over the committed row.
                guard !registered.flags.contains(.isDeleted) else { return true }
                if let filter, !matches(filter, registered, pending: true) { return true }
                try accept(registered)
                return true
            }
            if let filter, !filter.matches({ Self.committedAttribute(row, $0) }) { return true }
            try accept(materialize(row))
            return true
        }

        if let filter, let (constraint, value) = filter.uniqueLookup(in: entity) {
            statistics.usedIndex = true
            let tuple = UniqueKey(entityIndex: constraint.entityIndex, ordinal: constraint.ordinal, values: [value])
            if let key = store.holder(of: tuple), let row = store.row(forKey: key, in: familyIndices) {
                statistics.rowsExamined += 1
                let object = materialize(row)
                if !(pending && object.flags.contains(.isDeleted)), matches(filter, object, pending: pending) {
                    try accept(object)
                }
            }
            // An object changed in this context to hold the value is not in the uniqueness index yet.
            if pending {
                for object in changedObjects(in: family) where object.key != (store.holder(of: tuple) ?? 0) {
                    guard let row = object.row ?? store.row(forKey: object.key, in: familyIndices) else { continue }
                    _ = try consider(row)
                }
            }
        } else {
            let ranges = filter?.indexRanges(in: entity) ?? []
            // Objects changed in this context may match by their unsaved values; an index of committed values
            // would miss them, so their rows are examined too.
            let changedKeys = ranges.isEmpty || !pending ? [] : changedObjects(in: family).map(\.key)
            scan: for entityIndex in familyIndices {
                if !ranges.isEmpty,
                    let rows = store.indexedRows(entityIndex: entityIndex, ranges: ranges, extraKeys: changedKeys)
                {
                    statistics.usedIndex = true
                    for row in rows where !(try consider(row)) { break scan }
                    continue
                }
                guard let table = store.rowSnapshots(of: [entityIndex]).first else { continue }
                for case let row? in table where !(try consider(row)) { break scan }
            }
        }
        if pending {
            for object in insertedList where object.flags.contains(.isInserted) && !object.flags.contains(.isDeleted) {
                guard family.contains(object.entity.index) else { continue }
                if let filter, !matches(filter, object, pending: true) { continue }
                try accept(object)
            }
        }
        lastFetchStatistics = statistics
        sort(&results, descriptor, entity: entity)
        if descriptor.fetchOffset > 0 { results.removeFirst(min(descriptor.fetchOffset, results.count)) }
        if let limit = descriptor.fetchLimit, results.count > limit { results.removeLast(results.count - limit) }
        return results
    }

    /// Saved objects of some entities with unsaved property changes, each once.
    private func changedObjects(in family: Set<Int>) -> [ManagedObject] {
        var seen: Set<UInt64> = []
        return changedList.filter { object in
            !object.pending.isEmpty && !object.flags.contains(.isInserted) && !object.flags.contains(.isDead)
                && family.contains(object.entity.index) && seen.insert(object.key).inserted
        }
    }

    /// The number of objects a fetch would return.
    public func fetchCount<T: ManagedObject>(_ descriptor: FetchDescriptor<T>) throws(EventGraphError) -> Int {
        if descriptor.predicate == nil, descriptor.filter == nil, !descriptor.includesPendingChanges || !hasChanges {
            let entity = try resolveEntity(descriptor)
            let indices = descriptor.includesSubentities ? entity.familyIndices : [entity.index]
            let total = store.state.withLock { state in indices.reduce(0) { $0 + state.tables[$1].count } }
            let windowed = max(0, total - descriptor.fetchOffset)
            return descriptor.fetchLimit.map { min($0, windowed) } ?? windowed
        }
        return try fetch(descriptor).count
    }

    /// Fetches objects by ID, in the order given; IDs of objects that do not exist are skipped.
    public func fetch<T: ManagedObject>(_ type: T.Type, ids: [ObjectID]) -> [T] {
        ids.compactMap { object(with: $0) as? T }
    }

    /// The object of class `T` whose unique attribute equals `value`, or a new inserted one configured by
    /// `configure` — without a fetch-then-insert race: if another context saves an object with the same value
    /// first, this context's save updates that object instead of failing (its values win).
    ///
    /// - Parameters:
    ///   - keyPath: a property declared `@Attribute(.unique)`.
    public func fetchOrInsert<T: ManagedObject, Value: PersistentValue>(
        _ type: T.Type, unique keyPath: KeyPath<T, Value>, equals value: Value, configure: (T) -> Void = { _ in }
    ) -> T {
        let entity = model.requireEntity(for: type)
        guard let index = PropertyKeyPathResolver.attributeIndex(of: keyPath),
            let attribute = entity.properties[index].attribute,
            let ordinal = entity.uniqueConstraints.firstIndex(where: { $0.propertyIndices == [attribute.index] })
        else {
            preconditionFailure("\(keyPath) does not name a unique attribute of \(entity.name)")
        }
        let stored = value.attributeValue
        for object in insertedList where object.flags.contains(.isInserted) && !object.flags.contains(.isDeleted) {
            if let typed = object as? T, typed.storedAttributeValue(at: attribute.index) == stored { return typed }
        }
        let constraint = entity.uniqueConstraints[ordinal]
        let tuple = UniqueKey(entityIndex: constraint.entityIndex, ordinal: constraint.ordinal, values: [stored])
        if let key = store.holder(of: tuple),
            let row = store.row(forKey: key, in: model.entities[constraint.entityIndex].familyIndices),
            let existing = materialize(row) as? T, !existing.isDeleted
        {
            return existing
        }
        let object = T()
        insert(object)
        object.setStoredAttributeValue(stored, at: attribute.index)
        configure(object)
        upsertKeys[object.key] = ordinal
        return object
    }

    // MARK: - Helpers

    private func resolveEntity<T: ManagedObject>(_ descriptor: FetchDescriptor<T>) throws(EventGraphError) -> EntityDescription {
        if let name = descriptor.entityName {
            guard let entity = model.entity(named: name) else {
                throw EventGraphError(.invalidArgument, "the model has no entity named '\(name)'")
            }
            return entity
        }
        guard let entity = model.entity(for: T.self) else {
            throw EventGraphError(.invalidArgument, "\(T.self) is not part of the model; name an entity")
        }
        return entity
    }

    private static func committedAttribute(_ row: Row, _ index: Int) -> AttributeValue {
        if case .attribute(let value) = row.values[index] { return value }
        return .null
    }

    private func matches(_ filter: ResolvedFilter, _ object: ManagedObject, pending: Bool) -> Bool {
        filter.matches { index in
            if pending, let value = object.storedAttributeValue(at: index) { return value }
            if let row = object.row, case .attribute(let value) = row.values[index] { return value }
            if case .attribute(let value) = object.entity.defaultValues[index] { return value }
            return .null
        }
    }

    private func sort<T: ManagedObject>(_ results: inout [T], _ descriptor: FetchDescriptor<T>, entity: EntityDescription) {
        guard !descriptor.sortBy.isEmpty || !descriptor.sortKeys.isEmpty else { return }
        let keys = descriptor.sortKeys.compactMap { key in entity.attribute(named: key.attributeName).map { ($0.index, key.ascending) } }
        results.sort { a, b in
            for comparator in descriptor.sortBy {
                switch comparator.compare(a, b) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            for (index, ascending) in keys {
                let x = a.storedAttributeValue(at: index) ?? .null
                let y = b.storedAttributeValue(at: index) ?? .null
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
