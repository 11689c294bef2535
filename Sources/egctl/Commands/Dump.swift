import ArgumentParser
import EventGraph
import Foundation
import LogFormat

/// `egctl dump STORE --entity NAME [--where EXPR] [--format text|json|csv]`, or `egctl dump STORE --counters`
struct Dump: ParsableCommand {
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json, csv
    }

    static let configuration = CommandConfiguration(
        abstract: "Print the objects of an entity (sub-entities included) with attributes and relationship targets.",
        // The generated usage line runs past 80 columns; this one groups the choices.
        usage: """
            egctl dump <store> --entity <name> [--where <filter>] [--format <format>]
            egctl dump <store> --counters [--format <format>]
            """,
        discussion: """
            Relationship targets are printed as object URIs, which name their store; a target in another store is \
            also marked with that store (text) or listed under "foreignReferences" (json). --where takes comparisons (== != < <= > >= contains \
            beginsWith endsWith) joined by and, or, not and parentheses; values are integers (compared exactly), \
            decimal numbers, "quoted strings", true, false, nil and date("2024-05-01T12:00:00Z"). A to-one \
            relationship compares as nil or its target's key, a to-many one as its number of targets.

            --counters prints the store's named counters (sequence generators) instead: each name with the last \
            value it handed out (the next is one more).

            Examples:
              egctl dump blog.eglog --entity Post \\
                --where 'identity < 10 and (title contains "swift" or not author == nil)'
              egctl dump blog.eglog --entity Author --format csv > authors.csv
              egctl dump school.eglog --counters --format json
            """)

    @OptionGroup var store: StoreArgument
    @Option(help: ArgumentHelp("The entity whose objects to print.", valueName: "name"))
    var entity: String?
    @Flag(help: "Print the named counters (sequence generators) and their last values instead of objects.")
    var counters = false
    @Option(name: .customLong("where"), help: "A filter, e.g. 'identity >= 10 and title contains \"x\"'.")
    var filter: String?
    @Option(help: "Output format: text, json or csv.")
    var format: Format = .text

    func validate() throws {
        if counters == (entity != nil) { throw ValidationError("give either --entity or --counters") }
        if counters && filter != nil {
            throw ValidationError("--where filters objects; it does not apply to --counters")
        }
    }

    func run() throws {
        try Failure.guarding {
            guard let entity else {
                let loaded = try StoreLoader.load(store.store, label: "dump")
                if let part = loaded.undecidedPart { Terminal.warn("egctl: note: " + part.text) }
                printCounters(loaded.graph.sequenceReservations)
                return
            }
            let parsed: FetchFilter?
            do { parsed = try filter.map(FetchFilter.init(parsing:)) } catch {
                throw ValidationError("--where: \(error)")
            }
            let loaded = try StoreLoader.load(store.store, label: "dump")
            if let part = loaded.undecidedPart { Terminal.warn("egctl: note: " + part.text) }
            let graph = loaded.graph
            guard let catalog = graph.catalog, let entityIndex = catalog.entityIndex(named: entity) else {
                let known = graph.catalog?.schema.entities.map(\.name).joined(separator: ", ") ?? "none"
                throw ValidationError("the store's model has no entity named '\(entity)' (entities: \(known))")
            }
            let expression: ResolvedFilter?
            do {
                expression = try parsed.map { filter throws(EventGraphError) in
                    try ResolvedFilter(filter, entityName: entity) { catalog.propertyIndex($0, inEntity: entityIndex) }
                }
            } catch {
                throw ValidationError("--where: \(error)")
            }
            let family = Set(catalog.familyIndices[entityIndex].map(UInt32.init))
            let selected = graph.objectReferences.filter { object in
                object.storeIndex == 0 && family.contains(object.entityIndex)
                    && (expression?.matches { Self.filterValue(graph.value(of: object, property: $0)) } ?? true)
            }.sorted { ($0.key, $0.entityIndex) < ($1.key, $1.entityIndex) }
            let renderer = ChangesetRenderer(graph: graph, storeUUID: loaded.reader.header.storeUUID)
            let columns = catalog.schema.entities[entityIndex].properties.filter(SchemaCatalog.isPersistent).map(\.name)
            func values(_ object: ObjectReference) -> [(String, PropertyValue)] {
                catalog.schema.entities[Int(object.entityIndex)].properties.enumerated().compactMap { index, property in
                    guard SchemaCatalog.isPersistent(property), let value = graph.value(of: object, property: index)
                    else { return nil }
                    return (property.name, value)
                }
            }
            switch format {
            case .json:
                let rows = selected.map { object -> [String: Any] in
                    var row: [String: Any] = [
                        "uri": renderer.uri(object, in: graph),
                        "entity": catalog.entityName(object.entityIndex),
                    ]
                    for (name, value) in values(object) {
                        row[name] = renderer.valueJSON(value, graph, nil)
                    }
                    let foreign = values(object).flatMap { name, value in
                        Self.targets(value).compactMap { target -> [String: Any]? in
                            guard let store = graph.storeUUID(of: target) else { return nil }
                            let uri = renderer.uri(target, in: graph)
                            return ["relationship": name, "target": uri, "store": "\(store)"]
                        }
                    }
                    if !foreign.isEmpty { row["foreignReferences"] = foreign }
                    return row
                }
                JSONOutput.print(rows)
            case .csv:
                print((["uri", "entity"] + columns).map(Self.csvField).joined(separator: ","))
                for object in selected {
                    let byName = Dictionary(values(object), uniquingKeysWith: { a, _ in a })
                    let fields =
                        [
                            renderer.uri(object, in: graph),
                            catalog.entityName(object.entityIndex),
                        ]
                        + columns.map { name in
                            byName[name].map { Self.csvText($0, graph: graph, renderer: renderer) } ?? ""
                        }
                    print(fields.map(Self.csvField).joined(separator: ","))
                }
            case .text:
                for object in selected {
                    print(renderer.uri(object, in: graph))
                    for (name, value) in values(object) {
                        var stores: [String] = []
                        for target in Self.targets(value) {
                            if let store = graph.storeUUID(of: target), !stores.contains("\(store)") {
                                stores.append("\(store)")
                            }
                        }
                        let marker = stores.isEmpty ? "" : "   (in store \(stores.joined(separator: ", ")))"
                        print("  \(name) = \(renderer.valueText(value, graph, nil))\(marker)")
                    }
                }
                Terminal.warn("\(selected.count) \(entity) objects")
            }
        }
    }

    /// Prints named counters in the chosen format.
    private func printCounters(_ counters: [SequenceReservation]) {
        switch format {
        case .json: JSONOutput.print(counters.map(\.json))
        case .csv:
            print("name,lastValue")
            for counter in counters { print("\(Self.csvField(counter.name)),\(counter.lastValue)") }
        case .text:
            for counter in counters { print("\(counter.name) = \(counter.lastValue)") }
            Terminal.warn("\(counters.count) counter\(counters.count == 1 ? "" : "s")")
        }
    }

    /// The objects a relationship value points at.
    static func targets(_ value: PropertyValue) -> [ObjectReference] {
        switch value {
        case .attribute: []
        case .toOne(let target): target.map { [$0] } ?? []
        case .toMany(let targets): targets
        }
    }

    static func csvText(_ value: PropertyValue, graph: LogGraph, renderer: ChangesetRenderer) -> String {
        if case .attribute(.string(let text)) = value { return text }
        if case .toMany(let targets) = value {
            return targets.map { renderer.uri($0, in: graph) }.joined(separator: " ")
        }
        return renderer.valueText(value, graph, nil)
    }

    /// What `--where` compares a property's value as: an attribute as itself, a to-one relationship as `nil` or its
    /// target's key, a to-many relationship as its number of targets (so `tags > 2` works).
    static func filterValue(_ value: PropertyValue?) -> AttributeValue {
        switch value {
        case nil: .null
        case .attribute(let attribute): attribute
        case .toOne(let target): target.map { .int64(Int64(truncatingIfNeeded: $0.key)) } ?? .null
        case .toMany(let targets): .int64(Int64(targets.count))
        }
    }

    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
