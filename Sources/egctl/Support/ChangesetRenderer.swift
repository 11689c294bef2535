import EventGraph
import Foundation
import LogFormat

/// Renders a changeset decoded against the schema: entity and property names, typed values, object URIs.
struct ChangesetRenderer {
    /// The graph as it was when the changeset applied (for the schema and foreign stores).
    let graph: LogGraph
    /// The UUID of the store whose log holds the changeset (names its own objects in URIs).
    let storeUUID: LogUUID

    func propertyName(_ object: ObjectReference, _ index: UInt32, _ graph: LogGraph) -> String {
        graph.catalog?.property(index, ofEntity: object.entityIndex)?.name ?? "#\(index)"
    }

    /// The URI of an object named in a changeset, whose store index counts into the changeset's `foreign` stores;
    /// with `foreign` `nil`, an object of the graph, whose store index counts into the graph's foreign stores.
    func uri(_ object: ObjectReference, _ graph: LogGraph, _ foreign: [LogUUID]?) -> String {
        guard let foreign else { return uri(object, in: graph) }
        if object.storeIndex > 0, Int(object.storeIndex) <= foreign.count {
            return uri(object, store: foreign[Int(object.storeIndex) - 1], graph)
        }
        var local = object
        local.storeIndex = 0
        return uri(local, in: graph)
    }

    /// The URI of an object of the graph, whose store index counts into the graph's foreign stores.
    func uri(_ object: ObjectReference, in graph: LogGraph) -> String {
        uri(object, store: graph.storeUUID(of: object) ?? storeUUID, graph)
    }

    /// `eventgraph://<store UUID>/<Entity>/<key>`, as the library prints an object ID.
    private func uri(_ object: ObjectReference, store: LogUUID, _ graph: LogGraph) -> String {
        let entity = graph.catalog?.entityName(object.entityIndex) ?? "#\(object.entityIndex)"
        return ObjectID(storeUUID: UUID(logUUID: store), entityName: entity, key: object.key).uriString
    }

    func valueText(_ value: PropertyValue, _ graph: LogGraph, _ foreign: [LogUUID]?) -> String {
        switch value {
        case .attribute(let a): a.displayText
        case .toOne(let target): target.map { uri($0, graph, foreign) } ?? "nil"
        case .toMany(let targets): "[" + targets.map { uri($0, graph, foreign) }.joined(separator: ", ") + "]"
        }
    }

    func valueJSON(_ value: PropertyValue, _ graph: LogGraph, _ foreign: [LogUUID]?) -> Any {
        switch value {
        case .attribute(let a): a.jsonObject
        case .toOne(let target): target.map { uri($0, graph, foreign) as Any } ?? NSNull()
        case .toMany(let targets): targets.map { uri($0, graph, foreign) }
        }
    }

    func lines(_ changeset: Changeset) -> [String] {
        let foreign = changeset.foreignStores
        return changeset.operations.map { operation in
            switch operation {
            case .insert(let object, let changes), .update(let object, let changes):
                let verb = if case .insert = operation { "insert" } else { "update" }
                let values = changes.map {
                    "\(propertyName(object, $0.propertyIndex, graph))=\(valueText($0.value, graph, foreign))"
                }
                return "\(verb) \(uri(object, graph, foreign))  " + values.joined(separator: " ")
            case .relate(let object, let property, let added, let removed):
                var text = "relate \(uri(object, graph, foreign)).\(propertyName(object, property, graph))"
                if !added.isEmpty {
                    text += " +[" + added.map { uri($0, graph, foreign) }.joined(separator: ", ") + "]"
                }
                if !removed.isEmpty {
                    text += " -[" + removed.map { uri($0, graph, foreign) }.joined(separator: ", ") + "]"
                }
                return text
            case .delete(let object):
                return "delete \(uri(object, graph, foreign))"
            }
        }
    }

    func json(_ changeset: Changeset) -> [String: Any] {
        let foreign = changeset.foreignStores
        return [
            "transaction": changeset.transactionID,
            "time": Date(commitTimeMicroseconds: changeset.commitTimeMicroseconds).iso8601Text,
            "author": changeset.author,
            "operations": changeset.operations.map { operation -> [String: Any] in
                switch operation {
                case .insert(let object, let changes), .update(let object, let changes):
                    var values: [String: Any] = [:]
                    for change in changes {
                        values[propertyName(object, change.propertyIndex, graph)] = valueJSON(
                            change.value, graph, foreign)
                    }
                    let verb = if case .insert = operation { "insert" } else { "update" }
                    return [
                        "op": verb, "object": uri(object, graph, foreign),
                        "entity": graph.catalog?.entityName(object.entityIndex) ?? "#\(object.entityIndex)",
                        "values": values,
                    ]
                case .relate(let object, let property, let added, let removed):
                    return [
                        "op": "relate", "object": uri(object, graph, foreign),
                        "relationship": propertyName(object, property, graph),
                        "added": added.map { uri($0, graph, foreign) },
                        "removed": removed.map { uri($0, graph, foreign) },
                    ]
                case .delete(let object):
                    return ["op": "delete", "object": uri(object, graph, foreign)]
                }
            },
        ]
    }
}
