import ArgumentParser
import EventGraph
import Foundation
import LogFormat

/// `egctl dump STORE --entity NAME [--where EXPR] [--format text|json|csv]`
struct Dump: ParsableCommand {
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json, csv
    }

    static let configuration = CommandConfiguration(
        abstract: "Print the objects of an entity (sub-entities included) with attributes and relationship targets.",
        discussion: """
            Relationship targets are printed as object URIs. --where takes comparisons joined by and/or: \
            == != < <= > >= contains beginswith endswith; values are numbers, "quoted strings", true, false, nil.

            Examples:
              egctl dump blog.eglog --entity Post \\
                --where 'identity < 10 and title contains "swift"'
              egctl dump blog.eglog --entity Author --format csv > authors.csv
            """)

    @OptionGroup var store: StoreArgument
    @Option(help: ArgumentHelp("The entity whose objects to print.", valueName: "name"))
    var entity: String
    @Option(name: .customLong("where"), help: "A filter, e.g. 'identity >= 10 and title contains \"x\"'.")
    var filter: String?
    @Option(help: "Output format: text, json or csv.")
    var format: Format = .text

    func run() throws {
        try Failure.guarding {
            let expression: WhereExpression?
            do { expression = try filter.map(WhereExpression.parse) } catch {
                throw ValidationError("\(error)")
            }
            let loaded = try StoreLoader.load(store.store, label: "dump")
            let graph = loaded.graph
            guard let catalog = graph.catalog, let entityIndex = catalog.entityIndex(named: entity) else {
                let known = graph.catalog?.schema.entities.map(\.name).joined(separator: ", ") ?? "none"
                throw ValidationError("the store's model has no entity named '\(entity)' (entities: \(known))")
            }
            do { try expression?.validate(entity: entityIndex, catalog: catalog) } catch {
                throw ValidationError("\(error)")
            }
            let family = Set(catalog.familyIndices[entityIndex].map(UInt32.init))
            let selected = graph.objectReferences.filter { object in
                object.storeIndex == 0 && family.contains(object.entityIndex)
                    && (expression?.matches(object, in: graph) ?? true)
            }.sorted { ($0.key, $0.entityIndex) < ($1.key, $1.entityIndex) }
            let storeUUID = loaded.reader.header.storeUUID
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
                        "uri": ValueFormatting.uri(object, graph: graph, storeUUID: storeUUID),
                        "entity": catalog.entityName(object.entityIndex),
                    ]
                    for (name, value) in values(object) {
                        row[name] = ValueFormatting.json(value, graph: graph, storeUUID: storeUUID)
                    }
                    return row
                }
                JSONOutput.print(rows)
            case .csv:
                print((["uri", "entity"] + columns).map(Self.csvField).joined(separator: ","))
                for object in selected {
                    let byName = Dictionary(values(object), uniquingKeysWith: { a, _ in a })
                    let fields =
                        [
                            ValueFormatting.uri(object, graph: graph, storeUUID: storeUUID),
                            catalog.entityName(object.entityIndex),
                        ]
                        + columns.map { name in
                            byName[name].map { Self.csvText($0, graph: graph, storeUUID: storeUUID) } ?? ""
                        }
                    print(fields.map(Self.csvField).joined(separator: ","))
                }
            case .text:
                for object in selected {
                    print(ValueFormatting.uri(object, graph: graph, storeUUID: storeUUID))
                    for (name, value) in values(object) {
                        print("  \(name) = \(ValueFormatting.text(value, graph: graph, storeUUID: storeUUID))")
                    }
                }
                Terminal.warn("\(selected.count) \(entity) objects")
            }
        }
    }

    static func csvText(_ value: PropertyValue, graph: LogGraph, storeUUID: LogUUID) -> String {
        if case .attribute(.string(let text)) = value { return text }
        if case .toMany(let targets) = value {
            return targets.map { ValueFormatting.uri($0, graph: graph, storeUUID: storeUUID) }.joined(separator: " ")
        }
        return ValueFormatting.text(value, graph: graph, storeUUID: storeUUID)
    }

    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
