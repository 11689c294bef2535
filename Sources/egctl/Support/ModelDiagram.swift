import EventGraph
import Foundation
import LogFormat

/// The model recorded in a log, as text lines, JSON, or a Graphviz diagram.
enum ModelDiagram {
    static func text(_ schema: SchemaPayload) -> [String] {
        var lines: [String] = []
        for entity in schema.entities {
            var heading = entity.name
            if let parent = entity.superentityName { heading += " : \(parent)" }
            if entity.isAbstract { heading += " (abstract)" }
            lines.append(heading)
            for property in entity.properties {
                switch property {
                case .attribute(let a):
                    var flags: [String] = []
                    if !a.isOptional { flags.append("required") }
                    if a.isTransient { flags.append("transient") }
                    if let threshold = a.externalStorageThreshold { flags.append("external ≥ \(threshold) B") }
                    if let transformer = a.transformerName { flags.append("transformer \(transformer)") }
                    if let value = a.defaultValue { flags.append("default \(value.displayText)") }
                    lines.append(
                        "  \(a.name): \(a.type)" + (flags.isEmpty ? "" : "  [\(flags.joined(separator: ", "))]"))
                case .relationship(let r):
                    let arrow = r.isToMany ? "->>" : "->"
                    var flags = ["delete \(r.deleteRule)"]
                    if let inverse = r.inverseName { flags.append("inverse \(inverse)") }
                    if r.isOrdered { flags.append("ordered") }
                    if r.minCount > 0 || r.maxCount > 0 {
                        flags.append("count \(r.minCount)…\(r.maxCount == 0 ? "∞" : "\(r.maxCount)")")
                    }
                    lines.append("  \(r.name) \(arrow) \(r.destinationEntityName)  [\(flags.joined(separator: ", "))]")
                }
            }
            for constraint in entity.uniquenessConstraints {
                lines.append("  unique (\(constraint.joined(separator: ", ")))")
            }
            for index in entity.indexes { lines.append("  index (\(index.joined(separator: ", ")))") }
        }
        return lines
    }

    static func json(_ schema: SchemaPayload) -> [String: Any] {
        [
            "name": schema.modelName,
            "version": schema.versionIdentifier,
            "hash": String(schema.modelHash, radix: 16),
            "entities": schema.entities.map { entity -> [String: Any] in
                var object: [String: Any] = [
                    "name": entity.name,
                    "abstract": entity.isAbstract,
                    "attributes": entity.properties.compactMap { property -> [String: Any]? in
                        guard case .attribute(let a) = property else { return nil }
                        var attribute: [String: Any] = [
                            "name": a.name, "type": "\(a.type)", "optional": a.isOptional, "transient": a.isTransient,
                        ]
                        if let threshold = a.externalStorageThreshold {
                            attribute["externalStorageThreshold"] = threshold
                        }
                        if let transformer = a.transformerName { attribute["transformer"] = transformer }
                        if let value = a.defaultValue { attribute["default"] = value.jsonObject }
                        return attribute
                    },
                    "relationships": entity.properties.compactMap { property -> [String: Any]? in
                        guard case .relationship(let r) = property else { return nil }
                        var relationship: [String: Any] = [
                            "name": r.name, "destination": r.destinationEntityName, "toMany": r.isToMany,
                            "ordered": r.isOrdered, "deleteRule": "\(r.deleteRule)", "optional": r.isOptional,
                            "minCount": Int(r.minCount), "maxCount": Int(r.maxCount),
                        ]
                        if let inverse = r.inverseName { relationship["inverse"] = inverse }
                        return relationship
                    },
                    "uniquenessConstraints": entity.uniquenessConstraints,
                    "indexes": entity.indexes,
                ]
                if let parent = entity.superentityName { object["superentity"] = parent }
                return object
            },
        ]
    }

    /// Graphviz: one record-shaped node per entity listing its attributes, an edge per relationship (one arrow
    /// head for to-one, two for to-many), inheritance as a dashed edge. Each inverse pair is drawn once.
    static func dot(_ schema: SchemaPayload?) -> String {
        guard let schema else { return "digraph model {\n  label=\"no model recorded in this log\";\n}" }
        func escape(_ text: String) -> String {
            text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                .replacingOccurrences(of: "{", with: "\\{").replacingOccurrences(of: "}", with: "\\}")
                .replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "<", with: "\\<")
                .replacingOccurrences(of: ">", with: "\\>")
        }
        var lines = [
            "digraph \"\(escape(schema.modelName))\" {", "  rankdir=LR;",
            "  node [shape=record, fontname=\"Helvetica\"];",
            "  edge [fontname=\"Helvetica\", fontsize=10];",
        ]
        var drawn: Set<String> = []
        for entity in schema.entities {
            let inherited = Set(
                schema.entities.first { $0.name == entity.superentityName }?.properties.map(\.name) ?? [])
            let attributes = entity.properties.compactMap { property -> String? in
                guard case .attribute(let a) = property, !inherited.contains(a.name) else { return nil }
                return escape("\(a.name): \(a.type)\(a.isOptional ? "?" : "")")
            }
            let title = escape(entity.name) + (entity.isAbstract ? " (abstract)" : "")
            lines.append(
                "  \"\(escape(entity.name))\" [label=\"{\(title)|\(attributes.joined(separator: "\\l"))\\l}\"];")
            if let parent = entity.superentityName {
                lines.append("  \"\(escape(entity.name))\" -> \"\(escape(parent))\" [style=dashed, arrowhead=empty];")
            }
            for property in entity.properties {
                guard case .relationship(let r) = property, !inherited.contains(r.name) else { continue }
                let key = [entity.name + "." + r.name, r.destinationEntityName + "." + (r.inverseName ?? "")].sorted()
                    .joined(separator: "|")
                guard drawn.insert(key).inserted else { continue }
                var label = r.name
                var attributes = ["arrowhead=\(r.isToMany ? "normalnormal" : "normal")"]
                if let inverse = r.inverseName,
                    let destination = schema.entities.first(where: { $0.name == r.destinationEntityName }),
                    case .relationship(let back)? = destination.properties.first(where: { $0.name == inverse })
                {
                    label += " / \(inverse)"
                    attributes.append("dir=both")
                    attributes.append("arrowtail=\(back.isToMany ? "normalnormal" : "normal")")
                }
                attributes.append("label=\"\(escape(label))\"")
                lines.append(
                    "  \"\(escape(entity.name))\" -> \"\(escape(r.destinationEntityName))\" [\(attributes.joined(separator: ", "))];"
                )
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }
}
