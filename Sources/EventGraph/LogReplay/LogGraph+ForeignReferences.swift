package import LogFormat

/// A reference from an object of a store to an object of another store, as a replayed log holds it.
package struct ForeignReference: Hashable, Sendable {
    /// The referring object, in the graph's own store.
    package var source: ObjectReference
    /// The relationship that holds the reference.
    package var propertyIndex: Int
    /// The store the target lives in.
    package var targetStore: LogUUID
    /// The target, numbered in its own store (store index 0), with the entity index of the referring graph's model.
    package var target: ObjectReference
}

/// How many references a store holds into one other store.
package struct ForeignStoreCount: Hashable, Sendable {
    package var store: LogUUID
    package var referenceCount: Int
}

/// A reference between two of the stores checked together that is broken: its target does not exist, or the
/// target's inverse relationship does not point back.
package struct DanglingForeignReference: Hashable, Sendable, CustomStringConvertible {
    /// The store that holds the reference, and the reference.
    package var sourceStore: LogUUID
    package var reference: ForeignReference
    /// "Pupil #3 in store <UUID>.lectures → missing Lecture #7 in store <UUID>".
    package var message: String
    package var description: String { message }
}

/// The outcome of checking the references between stores replayed side by side.
package struct ForeignReferenceCheck: Sendable {
    /// How many references between the given stores were checked.
    package var checkedCount = 0
    /// The references among them whose target is missing.
    package var dangling: [DanglingForeignReference] = []
    /// The references among them whose target exists but does not point back through the inverse relationship.
    package var inverseMismatches: [DanglingForeignReference] = []
    /// References into stores that were not given, by store (not checked).
    package var uncheckedCounts: [ForeignStoreCount] = []
}

extension LogGraph {
    /// The stores this store's references may point into (every store it was opened with, in its log's order).
    package var foreignStores: [LogUUID] { state?.foreignStores ?? [] }

    /// Every reference of a live object into another store, in commit order.
    package var foreignReferences: [ForeignReference] {
        guard let state, let model else { return [] }
        var found: [ForeignReference] = []
        for entity in model.entities {
            let relationships = entity.properties.compactMap(\.relationship)
            guard !relationships.isEmpty else { continue }
            state.forEachRow(ofEntity: entity.index) { row in
                for relationship in relationships {
                    for target in row.values[relationship.index].references where target.storeIndex > 0 {
                        guard let store = state.storeUUID(of: target) else { continue }
                        var local = target
                        local.storeIndex = 0
                        found.append(
                            ForeignReference(
                                source: row.reference, propertyIndex: relationship.index, targetStore: store,
                                target: local))
                    }
                }
            }
        }
        return found
    }

    /// Each store of ``foreignStores`` with the number of references into it (zero for a store known only because
    /// it was opened together with this one).
    package func foreignReferenceCounts() -> [ForeignStoreCount] {
        var counts: [LogUUID: Int] = [:]
        for reference in foreignReferences { counts[reference.targetStore, default: 0] += 1 }
        return foreignStores.map { ForeignStoreCount(store: $0, referenceCount: counts[$0] ?? 0) }
    }

    /// The name of a property of an entity of the graph's model, for messages.
    package func propertyName(_ propertyIndex: Int, ofEntity entityIndex: UInt32) -> String {
        catalog?.property(UInt32(propertyIndex), ofEntity: entityIndex)?.name ?? "#\(propertyIndex)"
    }

    /// Checks the references between stores replayed side by side: each reference from one of them into another
    /// must name a live object of that store, of the entity the reference names or a sub-entity (matched by name,
    /// since each log numbers entities by its own schema). References into stores not given are counted, not
    /// checked.
    package static func checkForeignReferences(among stores: [(uuid: LogUUID, graph: LogGraph)])
        -> ForeignReferenceCheck
    {
        var check = ForeignReferenceCheck()
        let graphByStore = Dictionary(stores.map { ($0.uuid, $0.graph) }, uniquingKeysWith: { first, _ in first })
        for (uuid, graph) in stores {
            var unchecked: [LogUUID: Int] = [:]
            for reference in graph.foreignReferences {
                guard let targetGraph = graphByStore[reference.targetStore] else {
                    unchecked[reference.targetStore, default: 0] += 1
                    continue
                }
                check.checkedCount += 1
                let property = graph.propertyName(reference.propertyIndex, ofEntity: reference.source.entityIndex)
                let source = "\(graph.describe(reference.source)) in store \(uuid).\(property)"
                let target =
                    "\(graph.entityName(reference.target)) #\(reference.target.key) in store "
                    + "\(reference.targetStore)"
                guard let row = targetGraph.row(of: reference.target, namedBy: graph) else {
                    check.dangling.append(
                        DanglingForeignReference(
                            sourceStore: uuid, reference: reference, message: "\(source) → missing \(target)"))
                    continue
                }
                guard let inverse = graph.inverseName(of: reference),
                    !targetGraph.points(row, through: inverse, at: reference.source, in: uuid)
                else { continue }
                check.inverseMismatches.append(
                    DanglingForeignReference(
                        sourceStore: uuid, reference: reference,
                        message: "\(source) → \(target), but its \(inverse) does not point back"))
            }
            check.uncheckedCounts += unchecked.sorted { "\($0.key)" < "\($1.key)" }.map {
                ForeignStoreCount(store: $0.key, referenceCount: $0.value)
            }
        }
        return check
    }

    /// The live row with the key of `reference` in this graph, of the entity `other` names by the reference's
    /// entity index or of one of its sub-entities.
    private func row(of reference: ObjectReference, namedBy other: LogGraph) -> Row? {
        guard let state, let catalog, let name = other.catalog?.entityName(reference.entityIndex),
            let entityIndex = catalog.entityIndex(named: name)
        else { return nil }
        for index in catalog.familyIndices[entityIndex] {
            if let row = state.row(entityIndex: index, key: reference.key) { return row }
        }
        return nil
    }

    /// The name of the inverse of the relationship that holds a reference, if it has one.
    private func inverseName(of reference: ForeignReference) -> String? {
        guard
            case .relationship(let relationship)? = catalog?.property(
                UInt32(reference.propertyIndex), ofEntity: reference.source.entityIndex)
        else { return nil }
        return relationship.inverseName
    }

    /// Whether a row's relationship `name` holds `object` of the store `store`.
    private func points(_ row: Row, through name: String, at object: ObjectReference, in store: LogUUID) -> Bool {
        guard let state, let index = catalog?.propertyIndex(name, inEntity: row.entityIndex),
            index < row.values.count
        else { return false }
        return row.values[index].references.contains { $0.key == object.key && state.storeUUID(of: $0) == store }
    }

    private func entityName(_ reference: ObjectReference) -> String {
        catalog?.entityName(reference.entityIndex) ?? "#\(reference.entityIndex)"
    }
}
