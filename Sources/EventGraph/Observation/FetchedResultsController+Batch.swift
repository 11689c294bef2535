import LogFormat

/// Applying one batch of changed objects: each is evaluated once and placed by binary search, so a batch costs
/// O(changed × log results) comparisons, never a scan of the results.
extension FetchedResultsController {
    /// Where a changed object was and where it goes.
    private struct Placement {
        var identity: ObjectIdentity
        var oldKey: ResultsSortKey?
        var oldPath: ResultsIndexPath?
        var new: ResultsEntry<T>?

        /// Whether the object stays where it was (it is still a result and its key did not change).
        var staysInPlace: Bool
    }

    /// Brings the results up to date with the objects of `identities` (each at most once) and returns the
    /// difference. `renamed` maps an identity of `identities` to the one its object was placed with before the
    /// context renamed it: the object leaves that place, and a result already placed under the new identity (the
    /// committed object the rename merged it into) leaves the results.
    func apply(_ identities: [ObjectIdentity], renamed: [ObjectIdentity: ObjectIdentity] = [:])
        throws(EventGraphError) -> FetchedResultsDifference
    {
        var placements: [Placement] = []
        placements.reserveCapacity(identities.count)
        let renamedFrom = Set(renamed.values)
        // Old positions first, while the results are still as they were.
        for identity in identities where !renamedFrom.contains(identity) || renamed[identity] != nil {
            var oldKey = keys[identity]
            if let placed = renamed[identity], let placedKey = keys[placed] {
                if let superseded = oldKey {
                    placements.append(
                        Placement(
                            identity: identity, oldKey: superseded, oldPath: position(of: superseded), new: nil,
                            staysInPlace: false))
                }
                oldKey = placedKey
            }
            let oldPath = oldKey.map { position(of: $0) }
            statistics.objectsEvaluated += 1
            let new = try context.resultsCandidate(identity, plan: plan).map {
                ResultsEntry(object: $0, key: order.key(of: $0))
            }
            var staysInPlace = false
            if let oldKey, let new { staysInPlace = oldKey.identity == new.key.identity && sameValues(oldKey, new.key) }
            placements.append(
                Placement(
                    identity: identity, oldKey: oldKey, oldPath: oldPath ?? nil, new: new, staysInPlace: staysInPlace))
        }
        var difference = FetchedResultsDifference()
        removeLeaving(placements, into: &difference)
        insertArriving(placements, into: &difference)
        describeNewPositions(placements, into: &difference)
        return difference
    }

    /// Removes every result that leaves or moves, then every section left empty (recorded at its old index).
    private func removeLeaving(_ placements: [Placement], into difference: inout FetchedResultsDifference) {
        var leaving: [(path: ResultsIndexPath, placement: Placement)] = []
        for placement in placements where !placement.staysInPlace {
            guard let path = placement.oldPath else { continue }
            leaving.append((path, placement))
        }
        leaving.sort { $0.path > $1.path }
        var touchedSections: Set<Int> = []
        for (path, placement) in leaving {
            let entry = sections[path.section].entries.remove(at: path.row)
            if let oldKey = placement.oldKey { keys[oldKey.identity] = nil }
            touchedSections.insert(path.section)
            if placement.new == nil {
                difference.deletedRows.append(.init(objectID: entry.object.objectID, indexPath: path))
            }
        }
        difference.deletedRows.reverse()
        for index in touchedSections.sorted(by: >) where sections[index].entries.isEmpty {
            difference.deletedSections.append(.init(name: sections[index].name, index: index))
            sections.remove(at: index)
        }
        difference.deletedSections.reverse()
    }

    /// Inserts every result that arrives or moves, creating sections as needed.
    private func insertArriving(_ placements: [Placement], into difference: inout FetchedResultsDifference) {
        var createdSections: [AttributeValue] = []
        for placement in placements where !placement.staysInPlace {
            guard let entry = placement.new else { continue }
            let value = order.sectionValue(of: entry.key)
            let (sectionIndex, found) = sectionPosition(of: value)
            if !found {
                sections.insert(ResultsSectionRows(value: value, entries: []), at: sectionIndex)
                createdSections.append(value)
            }
            let row = rowPosition(of: entry.key, inSection: sectionIndex)
            sections[sectionIndex].entries.insert(entry, at: row)
            keys[entry.key.identity] = entry.key
        }
        for value in createdSections {
            let index = sectionPosition(of: value).index
            difference.insertedSections.append(.init(name: FetchedResultsOrder.sectionName(value), index: index))
        }
        difference.insertedSections.sort { $0.index < $1.index }
    }

    /// Records where arriving, moved and updated results are now that every change is in place.
    private func describeNewPositions(_ placements: [Placement], into difference: inout FetchedResultsDifference) {
        for placement in placements {
            guard let entry = placement.new else { continue }
            if placement.staysInPlace {
                // Same object, same key: only its entry's object reference may need refreshing.
                let path = position(of: entry.key)
                sections[path.section].entries[path.row].object = entry.object
                difference.updatedRows.append(.init(objectID: entry.object.objectID, indexPath: path))
                continue
            }
            let path = position(of: entry.key)
            if let from = placement.oldPath {
                difference.movedRows.append(.init(objectID: entry.object.objectID, from: from, to: path))
            } else {
                difference.insertedRows.append(.init(objectID: entry.object.objectID, indexPath: path))
            }
        }
        difference.insertedRows.sort { $0.indexPath < $1.indexPath }
        difference.movedRows.sort { $0.to < $1.to }
        difference.updatedRows.sort { $0.indexPath < $1.indexPath }
    }

    // MARK: - Binary search

    /// The index path of a result placed with `key`.
    func position(of key: ResultsSortKey) -> ResultsIndexPath {
        let (section, found) = sectionPosition(of: order.sectionValue(of: key))
        precondition(found, "a result's section is missing from the results controller")
        let row = rowPosition(of: key, inSection: section)
        precondition(
            row < sections[section].entries.count && sections[section].entries[row].key.identity == key.identity,
            "a result is missing from its place in the results controller")
        return ResultsIndexPath(section: section, row: row)
    }

    /// The index of the section with `value`, or where it would be inserted.
    private func sectionPosition(of value: AttributeValue) -> (index: Int, found: Bool) {
        guard order.isSectioned else { return (0, !sections.isEmpty) }
        var low = 0
        var high = sections.count
        while low < high {
            let middle = (low + high) / 2
            statistics.comparisons += 1
            if order.sectionPrecedes(sections[middle].value, value) { low = middle + 1 } else { high = middle }
        }
        let found = low < sections.count && order.sameSection(sections[low].value, value)
        return (low, found)
    }

    /// The first row of a section whose key does not precede `key`: the key's row, or where it goes.
    private func rowPosition(of key: ResultsSortKey, inSection section: Int) -> Int {
        var low = 0
        var high = sections[section].entries.count
        while low < high {
            let middle = (low + high) / 2
            statistics.comparisons += 1
            if order.precedes(sections[section].entries[middle].key, key) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Whether two keys of one object hold the same values (so the object keeps its place).
    private func sameValues(_ a: ResultsSortKey, _ b: ResultsSortKey) -> Bool {
        zip(a.values, b.values).allSatisfy { $0.compare(to: $1) == .orderedSame || $0 == $1 }
    }
}

extension ObjectContext {
    /// The object with `identity` when it is one of `plan`'s results in this context's view, evaluated the way a
    /// fetch evaluates one row (unsaved changes count when the plan includes them).
    func resultsCandidate<T>(_ identity: ObjectIdentity, plan: FetchPlan<T>) throws(EventGraphError) -> T? {
        var collector = FetchCollector(plan)
        if let object = registered[identity], object.flags.contains(.isInserted) {
            guard plan.includesPending, !object.flags.contains(.isDeleted), plan.family.contains(object.entity.index)
            else { return nil }
            if let filter = plan.filter, !matches(filter, object, pending: true) { return nil }
            try collector.accept(object)
        } else if let row = try parentStore.lookUpCommittedRow(of: identity, in: plan.familyIndices) {
            _ = try consider(row, inStore: identity.storeIndex, into: &collector)
        }
        return collector.first as? T
    }
}
