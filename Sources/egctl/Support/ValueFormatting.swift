import EventGraph
import Foundation
import LogFormat

/// How values, references and times look in egctl's text and JSON output.
enum ValueFormatting {
    /// `eventgraph://<store UUID>/<Entity>/<key>`: the object URI EventGraph uses.
    static func uri(_ reference: ObjectReference, graph: LogGraph, storeUUID: LogUUID) -> String {
        let store = graph.storeUUID(of: reference) ?? storeUUID
        let entity = graph.catalog?.entityName(reference.entityIndex) ?? "#\(reference.entityIndex)"
        return "eventgraph://\(store)/\(entity)/\(reference.key)"
    }

    /// ISO 8601 with milliseconds, UTC.
    static func time(microseconds: Int64) -> String {
        iso8601(Date(timeIntervalSince1970: Double(microseconds) / 1e6))
    }

    /// A date as ISO 8601, or as what it is when it is no point in time: `-inf`, `inf` or `nan` (the way
    /// doubles print), never a formatter's far-future date or empty string.
    static func date(_ secondsSinceReferenceDate: Double) -> String {
        guard secondsSinceReferenceDate.isFinite else { return "\(secondsSinceReferenceDate)" }
        return iso8601(Date(timeIntervalSinceReferenceDate: secondsSinceReferenceDate))
    }

    static func iso8601(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    /// A value for humans: strings quoted, binaries by length.
    static func text(_ value: AttributeValue) -> String {
        switch value {
        case .null: "null"
        case .int16(let v): "\(v)"
        case .int32(let v): "\(v)"
        case .int64(let v): "\(v)"
        case .double(let v): "\(v)"
        case .float(let v): "\(v)"
        case .bool(let v): "\(v)"
        case .string(let v): quoted(v)
        case .date(let v): date(v)
        case .uuid(let v): "\(v)"
        case .url(let v): "<\(v)>"
        case .decimal(let v): v
        case .binary(let v): "<\(v.count) bytes>"
        case .blob(let r): "<\(r.byteCount) bytes, external (transaction \(r.transactionID) blob \(r.index))>"
        case .transformable(let v): "<transformable, \(v.count) bytes>"
        }
    }

    static func quoted(_ text: String, limit: Int = 80) -> String {
        let clipped = text.count > limit ? String(text.prefix(limit)) + "…" : text
        return "\"" + clipped.replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
            + "\""
    }

    /// A value as a JSON-compatible object.
    static func json(_ value: AttributeValue) -> Any {
        switch value {
        case .null: NSNull()
        case .int16(let v): Int(v)
        case .int32(let v): Int(v)
        case .int64(let v): v
        case .double(let v): v.isFinite ? v as Any : "\(v)"
        case .float(let v): v.isFinite ? Double(v) as Any : "\(v)"
        case .bool(let v): v
        case .string(let v): v
        case .date(let v): date(v)
        case .uuid(let v): "\(v)"
        case .url(let v): v
        case .decimal(let v): v
        case .binary(let v): ["base64": Data(v).base64EncodedString()]
        case .blob(let r):
            ["external": ["transaction": r.transactionID, "index": Int(r.index), "byteCount": r.byteCount]]
        case .transformable(let v): ["transformable": Data(v).base64EncodedString()]
        }
    }

    /// A property value (attribute or relationship targets) as text.
    static func text(_ value: PropertyValue, graph: LogGraph, storeUUID: LogUUID) -> String {
        switch value {
        case .attribute(let attribute): text(attribute)
        case .toOne(let target): target.map { uri($0, graph: graph, storeUUID: storeUUID) } ?? "nil"
        case .toMany(let targets):
            "[" + targets.map { uri($0, graph: graph, storeUUID: storeUUID) }.joined(separator: ", ") + "]"
        }
    }

    static func json(_ value: PropertyValue, graph: LogGraph, storeUUID: LogUUID) -> Any {
        switch value {
        case .attribute(let attribute): json(attribute)
        case .toOne(let target): target.map { uri($0, graph: graph, storeUUID: storeUUID) as Any } ?? NSNull()
        case .toMany(let targets): targets.map { uri($0, graph: graph, storeUUID: storeUUID) }
        }
    }
}

/// JSON output.
enum JSONOutput {
    /// Prints one JSON document (sorted keys, so output is stable for scripts).
    static func print(_ object: Any, pretty: Bool = true) {
        var options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
        if pretty { options.insert(.prettyPrinted) }
        let data = try! JSONSerialization.data(withJSONObject: object, options: options)
        Swift.print(String(decoding: data, as: UTF8.self))
    }
}
