import EventGraph
import LogFormat

/// The `--where` language of `egctl dump`: comparisons joined by `and` / `or` (and binds tighter), e.g.
/// `identity >= 10 and title contains "swift" or author == nil`.
///
/// Operators: `==`, `!=`, `<`, `<=`, `>`, `>=`, `contains`, `beginswith`, `endswith`. Values: numbers, quoted
/// strings, `true`, `false`, `nil`/`null`. The left side names an attribute, or a to-one relationship compared with
/// `nil`.
indirect enum WhereExpression {
    case comparison(property: String, op: String, value: Literal)
    case and(WhereExpression, WhereExpression)
    case or(WhereExpression, WhereExpression)

    enum Literal: Equatable {
        case number(Double)
        case string(String)
        case bool(Bool)
        case null
    }

    struct ParseError: Error, CustomStringConvertible {
        var description: String
    }

    static let operators = ["==", "!=", "<=", ">=", "<", ">", "contains", "beginswith", "endswith"]

    /// Parses the whole text or throws naming the position.
    static func parse(_ text: String) throws -> WhereExpression {
        var tokens = try tokenize(text)
        let expression = try parseOr(&tokens)
        guard tokens.isEmpty else { throw ParseError(description: "unexpected '\(tokens[0])' in --where '\(text)'") }
        return expression
    }

    private static func parseOr(_ tokens: inout [String]) throws -> WhereExpression {
        var left = try parseAnd(&tokens)
        while tokens.first?.lowercased() == "or" {
            tokens.removeFirst()
            left = .or(left, try parseAnd(&tokens))
        }
        return left
    }

    private static func parseAnd(_ tokens: inout [String]) throws -> WhereExpression {
        var left = try parseComparison(&tokens)
        while tokens.first?.lowercased() == "and" {
            tokens.removeFirst()
            left = .and(left, try parseComparison(&tokens))
        }
        return left
    }

    private static func parseComparison(_ tokens: inout [String]) throws -> WhereExpression {
        guard tokens.count >= 3 else {
            throw ParseError(description: "incomplete comparison in --where (expected: attribute operator value)")
        }
        let property = tokens.removeFirst()
        let op = tokens.removeFirst().lowercased()
        guard operators.contains(op) else {
            throw ParseError(
                description: "unknown operator '\(op)' in --where; use one of \(operators.joined(separator: " "))")
        }
        let raw = tokens.removeFirst()
        let value: Literal
        if raw.hasPrefix("\"") {
            value = .string(String(raw.dropFirst().dropLast()))
        } else if raw == "true" || raw == "false" {
            value = .bool(raw == "true")
        } else if raw == "nil" || raw == "null" {
            value = .null
        } else if let number = Double(raw) {
            value = .number(number)
        } else {
            throw ParseError(description: "'\(raw)' in --where is not a number, quoted string, true, false or nil")
        }
        return .comparison(property: property, op: op, value: value)
    }

    private static func tokenize(_ text: String) throws -> [String] {
        var tokens: [String] = []
        var index = text.startIndex
        while index < text.endIndex {
            let c = text[index]
            if c.isWhitespace {
                index = text.index(after: index)
            } else if c == "\"" {
                guard let close = text[text.index(after: index)...].firstIndex(of: "\"") else {
                    throw ParseError(description: "unterminated string in --where '\(text)'")
                }
                tokens.append(String(text[index...close]))
                index = text.index(after: close)
            } else if "=!<>".contains(c) {
                var end = text.index(after: index)
                if end < text.endIndex, text[end] == "=" { end = text.index(after: end) }
                tokens.append(String(text[index..<end]))
                index = end
            } else {
                var end = index
                while end < text.endIndex, !text[end].isWhitespace, !"=!<>\"".contains(text[end]) {
                    end = text.index(after: end)
                }
                tokens.append(String(text[index..<end]))
                index = end
            }
        }
        return tokens
    }

    /// Checks every property name against the entity, so typos fail before any output.
    func validate(entity: Int, catalog: SchemaCatalog) throws {
        switch self {
        case .comparison(let property, _, _):
            guard catalog.propertyIndex(property, inEntity: entity) != nil else {
                throw ParseError(
                    description: "entity \(catalog.schema.entities[entity].name) has no property '\(property)' "
                        + "(used in --where)")
            }
        case .and(let a, let b), .or(let a, let b):
            try a.validate(entity: entity, catalog: catalog)
            try b.validate(entity: entity, catalog: catalog)
        }
    }

    /// Evaluates against one object of the graph.
    func matches(_ object: ObjectReference, in graph: LogGraph) -> Bool {
        switch self {
        case .and(let a, let b): return a.matches(object, in: graph) && b.matches(object, in: graph)
        case .or(let a, let b): return a.matches(object, in: graph) || b.matches(object, in: graph)
        case .comparison(let property, let op, let literal):
            guard let catalog = graph.catalog,
                let index = catalog.propertyIndex(property, inEntity: Int(object.entityIndex)),
                let value = graph.value(of: object, property: index)
            else { return false }
            return Self.compare(value, op, literal)
        }
    }

    private static func compare(_ value: PropertyValue, _ op: String, _ literal: Literal) -> Bool {
        let lhs: Literal
        switch value {
        case .toOne(let target): lhs = target == nil ? .null : .string("object")
        case .toMany(let targets): lhs = .number(Double(targets.count))
        case .attribute(let attribute):
            switch attribute {
            case .null: lhs = .null
            case .int16(let v): lhs = .number(Double(v))
            case .int32(let v): lhs = .number(Double(v))
            case .int64(let v): lhs = .number(Double(v))
            case .double(let v): lhs = .number(v)
            case .float(let v): lhs = .number(Double(v))
            case .date(let v): lhs = .number(v)
            case .bool(let v): lhs = .bool(v)
            case .string(let v), .url(let v): lhs = .string(v)
            case .decimal(let v): lhs = Double(v).map(Literal.number) ?? .string(v)
            case .uuid(let v): lhs = .string("\(v)")
            case .binary, .blob, .transformable: lhs = .string("")
            }
        }
        switch (lhs, literal) {
        case (.number(let a), .number(let b)):
            switch op {
            case "==": return a == b
            case "!=": return a != b
            case "<": return a < b
            case "<=": return a <= b
            case ">": return a > b
            case ">=": return a >= b
            default: return false
            }
        case (.string(let a), .string(let b)):
            switch op {
            case "==": return a == b
            case "!=": return a != b
            case "<": return a < b
            case "<=": return a <= b
            case ">": return a > b
            case ">=": return a >= b
            case "contains": return a.contains(b)
            case "beginswith": return a.hasPrefix(b)
            case "endswith": return a.hasSuffix(b)
            default: return false
            }
        default:
            switch op {
            case "==": return lhs == literal
            case "!=": return lhs != literal
            default: return false
            }
        }
    }
}
