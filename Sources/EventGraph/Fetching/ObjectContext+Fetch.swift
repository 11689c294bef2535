import Foundation
import LogFormat

extension ObjectContext {
    /// Fetches the objects a descriptor describes. Results are faults that fire on first read.
    ///
    /// Committed rows are scanned from the store's snapshot (objects without unsaved changes are brought up
    /// to date); the context's unsaved inserts are included and its unsaved deletes excluded.
    ///
    /// - Throws: ``EventGraphError`` when the descriptor does not fit the model, or (``EventGraphError/Code/log``)
    ///   when a chunk of the store's checkpoint that the fetch reads cannot be loaded (damaged, or its reads kept
    ///   failing when tried again), naming the file, the entity, the chunk and its byte offset: a fetch never leaves
    ///   such a chunk's objects out.
    public func fetch<T: ManagedObject>(_ descriptor: FetchDescriptor<T>) throws(EventGraphError) -> [T] {
        let plan = try FetchPlan(descriptor, entity: try resolveEntity(descriptor), model: model)
        var collector = FetchCollector(plan)
        try collect(into: &collector)
        lastFetchStatistics = collector.statistics
        return plan.takeOrderedWindow(&collector)
    }

    // MARK: - Fetch stages

    /// Collects the committed and pending objects of a fetch; none of this is generic, so no row's work needs the
    /// metadata of a generic type.
    private func collect(into collector: inout FetchCollector) throws(EventGraphError) {
        let plan = collector.scope
        if let filter = plan.filter, let (constraint, value) = filter.uniqueLookup(in: plan.entity) {
            let tuple = UniqueKey(entityIndex: constraint.entityIndex, ordinal: constraint.ordinal, values: [value])
            try collectHolder(of: tuple, filter: filter, into: &collector)
        } else {
            try collectCommittedRows(into: &collector)
        }
        if plan.includesPending { try collectPendingInserts(into: &collector) }
    }

    /// A fetch by a unique value: the one object that holds it, plus objects changed here to hold it (the
    /// uniqueness index has only committed values).
    private func collectHolder(of tuple: UniqueKey, filter: ResolvedFilter, into collector: inout FetchCollector)
        throws(EventGraphError)
    {
        collector.statistics.usedIndex = true
        let plan = collector.scope
        let holder = try parentStore.identity(holding: tuple)
        if let holder, let row = try parentStore.lookUpCommittedRow(of: holder, in: plan.familyIndices) {
            collector.statistics.rowsExamined += 1
            let object = materialize(row, inStore: holder.storeIndex)
            if !(plan.includesPending && object.flags.contains(.isDeleted)),
                matches(filter, object, pending: plan.includesPending)
            {
                try collector.accept(object)
            }
        }
        guard plan.includesPending else { return }
        for object in changedObjects(in: plan.family) where object.identity != holder {
            let committed: CommittedRow
            if let values = object.committed {
                committed = CommittedRow(entityIndex: object.entity.index, key: object.identity.key, values: values)
            } else if let row = try parentStore.lookUpCommittedRow(of: object.identity, in: plan.familyIndices) {
                committed = row
            } else {
                continue
            }
            _ = try consider(committed, inStore: object.identity.storeIndex, into: &collector)
        }
    }

    /// A fetch by scan: for each entity of the family, the rows an attribute index finds for the filter's ranges
    /// (plus objects changed here, which may match by unsaved values the index lacks), or else every row.
    private func collectCommittedRows(into collector: inout FetchCollector) throws(EventGraphError) {
        let plan = collector.scope
        let (ranges, indexIsExact) = plan.filter?.indexRanges(in: plan.entity) ?? ([], false)
        // Objects changed here may match by unsaved values that the store's index and columns lack.
        let changed =
            plan.filter == nil || !plan.includesPending ? [] : changedObjects(in: plan.family).map(\.identity)
        for entityIndex in plan.familyIndices {
            var batches: [StoreRows]?
            // Rows a store filtered passed the filter on their committed values exactly (objects changed here are
            // judged by their own values in `consider` either way), so they are not filtered a second time.
            var passedFilter = false
            if !ranges.isEmpty {
                batches = try parentStore.indexedRows(entityIndex: entityIndex, ranges: ranges, including: changed)
                if batches != nil {
                    collector.statistics.usedIndex = true
                    // An index answers a filter that is only comparisons of its attribute exactly: its rows match
                    // by their committed values (in the version the lookup read), so they are not filtered again.
                    passedFilter = indexIsExact
                }
            }
            if batches == nil, let filter = plan.filter {
                batches = try parentStore.filteredRows(entityIndex: entityIndex, filter: filter, including: changed)
                passedFilter = true
            }
            let scanned: [StoreRows]
            if let batches { scanned = batches } else { scanned = try parentStore.rows(of: entityIndex) }
            // The entity of the rows scanned, for their new faults: looked up once, not per row.
            let scannedEntity = model.entities[entityIndex]
            let scannedCount = scanned.reduce(0) { $0 + $1.count }
            registered.reserveCapacity(registered.count + scannedCount)
            // Unfiltered, every scanned row is a result: the results are collected without growing their array.
            if plan.filter == nil, plan.stopAt == nil { collector.reserveCapacity(scannedCount) }
            for batch in scanned {
                var isFull = false
                try batch.forEachCommittedRow { (row: CommittedRow) throws(EventGraphError) -> Bool in
                    isFull = try !consider(
                        row, inStore: batch.storeIndex, passedFilter: passedFilter, entity: scannedEntity,
                        into: &collector)
                    return !isFull
                }
                if isFull { return }
            }
        }
    }

    /// Considers one committed row; returns false once the window is full. The context's own view of an object
    /// with unsaved changes wins over the committed row.
    ///
    /// `passedFilter` says the store already filtered the row on its committed values. The object is looked up once:
    /// a registered one is brought up to date with the row, otherwise a new fault holds the row (its chunk slot,
    /// so nothing is copied until a property is read, and no ``Row`` is made). `entity` is the scanned entity, when
    /// the caller has it: the row's, unless the row says otherwise.
    func consider(
        _ row: CommittedRow, inStore storeIndex: UInt32, passedFilter: Bool = false, entity: EntityDescription? = nil,
        into collector: inout FetchCollector
    ) throws(EventGraphError) -> Bool {
        if collector.isFull { return false }
        collector.statistics.rowsExamined += 1
        let identity = row.identity(inStore: storeIndex)
        // The plan is read in place, not copied: this runs for every row a scan examines.
        guard let registered = registered[identity] else {
            if !passedFilter, let filter = collector.scope.filter, !passes(filter, row, &collector.statistics) {
                return true
            }
            // The scanned entity, which the caller holds: no trip through the store's model and its entity list per
            // fetched object (a retain and a release of each, and of the entity).
            if let entity, entity.index == row.entityIndex {
                try collector.accept(makeFault(holding: row, identity: identity, entity: entity))
            } else {
                try collector.accept(makeFault(holding: row, identity: identity))
            }
            return true
        }
        if collector.scope.includesPending, !registered.pending.isEmpty || registered.flags.contains(.isDeleted) {
            guard !registered.flags.contains(.isDeleted) else { return true }
            if let filter = collector.scope.filter, !matches(filter, registered, pending: true) { return true }
            try collector.accept(registered)
            return true
        }
        if !passedFilter, let filter = collector.scope.filter, !passes(filter, row, &collector.statistics) {
            return true
        }
        try collector.accept(update(registered, with: row.values))
        return true
    }

    /// Whether a committed row's values pass a filter, counted in the statistics.
    @inline(__always)
    private func passes(_ filter: ResolvedFilter, _ row: CommittedRow, _ statistics: inout FetchStatistics) -> Bool {
        statistics.rowsFiltered += 1
        return filter.matches { row.values.attributeValue(at: $0) }
    }

    /// The context's unsaved inserts of the family that pass the filter.
    private func collectPendingInserts(into collector: inout FetchCollector) throws(EventGraphError) {
        let plan = collector.scope
        for object in insertedList where object.flags.contains(.isInserted) && !object.flags.contains(.isDeleted) {
            guard plan.family.contains(object.entity.index) else { continue }
            if let filter = plan.filter, !matches(filter, object, pending: true) { continue }
            try collector.accept(object)
        }
    }

    /// Saved objects of some entities with unsaved property changes, each once.
    private func changedObjects(in family: Set<Int>) -> [ManagedObject] {
        var seen: Set<ObjectIdentity> = []
        return changedList.filter { object in
            !object.pending.isEmpty && !object.flags.contains(.isInserted) && !object.flags.contains(.isDead)
                && family.contains(object.entity.index) && seen.insert(object.identity).inserted
        }
    }

    /// The number of objects a fetch would return.
    ///
    /// - Throws: as `fetch(_:)` does: a count with a predicate scans; a count without one reads no chunk.
    public func fetchCount<T: ManagedObject>(_ descriptor: FetchDescriptor<T>) throws(EventGraphError) -> Int {
        if descriptor.predicate == nil, descriptor.filter == nil, !descriptor.includesPendingChanges || !hasChanges {
            let entity = try resolveEntity(descriptor)
            let indices = descriptor.includesSubentities ? entity.familyIndices : [entity.index]
            let total = try parentStore.rowCount(of: indices)
            let windowed = max(0, total - descriptor.fetchOffset)
            return descriptor.fetchLimit.map { min($0, windowed) } ?? windowed
        }
        return try fetch(descriptor).count
    }

    /// Fetches objects by ID, in the order given; IDs of objects that do not exist are skipped. Each is looked up as
    /// ``object(with:)`` does (a checkpoint chunk that cannot be loaded ends the process).
    public func fetch<T: ManagedObject>(_ type: T.Type, ids: [ObjectID]) -> [T] {
        ids.compactMap { object(with: $0) as? T }
    }

    /// The object of class `T` whose unique attribute equals `value`, or a new inserted one configured by
    /// `configure` — without a fetch-then-insert race: if another context saves an object with the same value
    /// first, this context's save updates that object instead of failing (its values win).
    ///
    /// It throws as a fetch does: the answer may depend on a chunk of the store's checkpoint (the uniqueness index's,
    /// or the found object's) that cannot be read; inserting a new object then could duplicate one that exists.
    ///
    /// - Parameters:
    ///   - type: the class of the object.
    ///   - keyPath: a property declared `@Attribute(.unique)`.
    ///   - value: the unique value to find, and to give a new object.
    ///   - configure: sets up a new object (not called when one is found).
    /// - Throws: ``EventGraphError`` (``EventGraphError/Code/log``) when a chunk of the store's checkpoint that the
    ///   lookup reads cannot be loaded (damaged, or its reads kept failing when tried again), naming the file, the
    ///   entity, the chunk and its byte offset. Nothing is inserted then, and `configure` is not called.
    public func fetchOrInsert<T: ManagedObject, Value: PersistentValue>(
        _ type: T.Type, unique keyPath: KeyPath<T, Value>, equals value: Value, configure: (T) -> Void = { _ in }
    ) throws(EventGraphError) -> T {
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
        // A checkpoint chunk the answer depends on that cannot be loaded throws, rather than insert a duplicate of an
        // object that exists.
        if let holder = try parentStore.identity(holding: tuple),
            let row = try parentStore.lookUpCommittedRow(
                of: holder, in: model.entities[constraint.entityIndex].familyIndices),
            let existing = materialize(row, inStore: holder.storeIndex) as? T, !existing.isDeleted
        {
            return existing
        }
        let object = T()
        insert(object)
        object.setStoredAttributeValue(stored, at: attribute.index)
        configure(object)
        upsertKeys[object.identity] = ordinal
        return object
    }

    // MARK: - Helpers

    func resolveEntity<T: ManagedObject>(_ descriptor: FetchDescriptor<T>) throws(EventGraphError)
        -> EntityDescription
    {
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

    func matches(_ filter: ResolvedFilter, _ object: ManagedObject, pending: Bool) -> Bool {
        filter.matches { index in
            if pending, let value = object.storedAttributeValue(at: index) { return value }
            if let committed = object.committed { return committed.attributeValue(at: index) }
            if case .attribute(let value) = object.entity.defaultValues[index] { return value }
            return .null
        }
    }
}
