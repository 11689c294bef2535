package import LogFormat

/// A predicate built at run time from attribute names and values — for tools, migrations and the dynamic API.
///
/// Unlike `#Predicate`, it is evaluated directly against the store's committed rows, so a scan never creates
/// objects that do not match, and equality on a unique attribute is answered from the uniqueness index.
public indirect enum FetchFilter: Hashable, Sendable {
    /// Compares an attribute with a value.
    case compare(String, Comparison, StoredValue)
    /// All must hold.
    case and([FetchFilter])
    /// At least one must hold.
    case or([FetchFilter])
    /// Must not hold.
    case not(FetchFilter)

    /// How an attribute is compared with a value.
    public enum Comparison: Hashable, Sendable {
        case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual
        /// The string attribute contains the value.
        case contains
        /// The string attribute starts with the value.
        case beginsWith
        /// The string attribute ends with the value.
        case endsWith
    }

    /// `name == value`.
    public static func equal(_ name: String, _ value: StoredValue) -> FetchFilter { .compare(name, .equal, value) }

    /// `lower <= name <= upper`.
    public static func between(_ name: String, _ lower: StoredValue, _ upper: StoredValue) -> FetchFilter {
        .and([.compare(name, .greaterOrEqual, lower), .compare(name, .lessOrEqual, upper)])
    }
}

/// The order of results by attribute name, for the dynamic API.
public struct SortKey: Hashable, Sendable {
    public var attributeName: String
    public var ascending: Bool

    public init(_ attributeName: String, ascending: Bool = true) {
        self.attributeName = attributeName
        self.ascending = ascending
    }
}

/// A filter with names resolved to property indices for one entity family.
///
/// It evaluates against values handed in by index, so it does not depend on how the engine stores rows; egctl
/// evaluates `--where` with it.
package struct ResolvedFilter {
    indirect enum Node {
        case compare(Int, FetchFilter.Comparison, AttributeValue)
        case and([Node])
        case or([Node])
        case not(Node)
        case constant(Bool)
    }

    let root: Node

    init(_ filter: FetchFilter, entity: EntityDescription) throws(EventGraphError) {
        root = try Self.resolve(filter, entityName: entity.name, noun: "attribute") {
            entity.attribute(named: $0)?.index
        }
    }

    /// Resolves property names with `propertyIndex`; a name it returns `nil` for is an error naming `entityName`.
    package init(
        _ filter: FetchFilter, entityName: String, propertyIndex: (String) -> Int?
    ) throws(EventGraphError) {
        root = try Self.resolve(filter, entityName: entityName, noun: "property", propertyIndex)
    }

    init(root: Node) {
        self.root = root
    }

    /// The value ranges an index can answer: for each indexed attribute compared with `==`, `<`, `<=`, `>` or `>=`
    /// at the top level (alone or in a conjunction), the intersection of its conditions. Every matching row lies
    /// in each of these ranges.
    ///
    /// `isExact` says the rows in the one range are exactly the rows that match: the filter is such comparisons of
    /// one attribute and nothing else, so an index lookup (which leaves out values that do not compare with the
    /// operands, see ``AttributeIndex/keys(in:limit:)``) needs no second evaluation of the filter on each row.
    func indexRanges(in entity: EntityDescription) -> (ranges: [(propertyIndex: Int, range: IndexRange)], isExact: Bool)
    {
        var ranges: [(propertyIndex: Int, range: IndexRange)] = []
        var isExact = true
        func visit(_ node: Node) {
            switch node {
            case .and(let nodes):
                for node in nodes { visit(node) }
            case .compare(let index, let comparison, let value):
                guard entity.indexedPropertyIndices.contains(index),
                    let type = entity.properties[index].attribute?.type,
                    AttributeIndex.canLocate(value, in: type.attributeType)
                else {
                    isExact = false
                    return
                }
                let bound = IndexRange.Bound(value: value, isInclusive: true)
                let exclusive = IndexRange.Bound(value: value, isInclusive: false)
                let range: IndexRange
                switch comparison {
                case .equal: range = IndexRange(lower: bound, upper: bound)
                case .less: range = IndexRange(lower: nil, upper: exclusive)
                case .lessOrEqual: range = IndexRange(lower: nil, upper: bound)
                case .greater: range = IndexRange(lower: exclusive, upper: nil)
                case .greaterOrEqual: range = IndexRange(lower: bound, upper: nil)
                default:
                    isExact = false
                    return
                }
                if let position = ranges.firstIndex(where: { $0.propertyIndex == index }) {
                    ranges[position].range.intersect(range)
                } else {
                    ranges.append((index, range))
                }
            default:
                isExact = false
            }
        }
        visit(root)
        return (ranges, isExact && ranges.count == 1)
    }

    private static func resolve(
        _ filter: FetchFilter, entityName: String, noun: String, _ propertyIndex: (String) -> Int?
    ) throws(EventGraphError) -> Node {
        switch filter {
        case .compare(let name, let comparison, let value):
            guard let index = propertyIndex(name) else {
                throw EventGraphError(.invalidArgument, "\(entityName) has no \(noun) named '\(name)' to filter on")
            }
            // Converted once here, so that evaluating the filter against rows compares log values directly.
            return .compare(index, comparison, value.attributeValue)
        case .and(let filters):
            var nodes: [Node] = []
            for filter in filters {
                nodes.append(try resolve(filter, entityName: entityName, noun: noun, propertyIndex))
            }
            return .and(nodes)
        case .or(let filters):
            var nodes: [Node] = []
            for filter in filters {
                nodes.append(try resolve(filter, entityName: entityName, noun: noun, propertyIndex))
            }
            return .or(nodes)
        case .not(let filter):
            return .not(try resolve(filter, entityName: entityName, noun: noun, propertyIndex))
        }
    }

    /// Evaluates against property values (`value(index)`).
    package func matches(_ value: (Int) -> AttributeValue) -> Bool {
        Self.evaluate(root, value)
    }

    private static func evaluate(_ node: Node, _ value: (Int) -> AttributeValue) -> Bool {
        switch node {
        case .constant(let result): return result
        case .and(let nodes): return nodes.allSatisfy { evaluate($0, value) }
        case .or(let nodes): return nodes.contains { evaluate($0, value) }
        case .not(let node): return !evaluate(node, value)
        case .compare(let index, let comparison, let operand):
            let current = value(index)
            switch comparison {
            case .equal: return current.isEqual(to: operand)
            case .notEqual: return !current.isEqual(to: operand)
            case .less: return current.compare(to: operand) == .some(.orderedAscending)
            case .lessOrEqual: return current.compare(to: operand).map { $0 != .orderedDescending } ?? false
            case .greater: return current.compare(to: operand) == .some(.orderedDescending)
            case .greaterOrEqual: return current.compare(to: operand).map { $0 != .orderedAscending } ?? false
            case .contains:
                guard case .string(let text) = current, case .string(let part) = operand else { return false }
                return text.contains(part)
            case .beginsWith:
                guard case .string(let text) = current, case .string(let prefix) = operand else { return false }
                return text.hasPrefix(prefix)
            case .endsWith:
                guard case .string(let text) = current, case .string(let suffix) = operand else { return false }
                return text.hasSuffix(suffix)
            }
        }
    }

    /// When the filter is `attribute == value` on a uniquely constrained single attribute: that constraint.
    func uniqueLookup(in entity: EntityDescription) -> (UniqueConstraint, AttributeValue)? {
        guard case .compare(let index, .equal, let value) = root, value != .null else { return nil }
        guard let constraint = entity.uniqueConstraints.first(where: { $0.propertyIndices == [index] }) else {
            return nil
        }
        return (constraint, value)
    }
}

/// The order of two values, for sorting and range comparisons.
enum ValueOrder {
    case orderedAscending, orderedSame, orderedDescending
}

extension AttributeValue {
    /// Equality across numeric representations (an `Int64` attribute equals an `.int16` operand of the same value),
    /// exact for integers: `Int64` values are never rounded through `Double`.
    func isEqual(to other: AttributeValue) -> Bool {
        if self == other { return true }
        return numericOrder(other) == .orderedSame
    }

    /// Orders two values of comparable kinds; `nil` when they cannot be compared. Null sorts first.
    func compare(to other: AttributeValue) -> ValueOrder? {
        func order<T: Comparable>(_ a: T, _ b: T) -> ValueOrder {
            a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        }
        switch (self, other) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        case (.string(let a), .string(let b)), (.url(let a), .url(let b)): return order(a, b)
        case (.bool(let a), .bool(let b)): return order(a ? 1 : 0, b ? 1 : 0)
        case (.uuid(let a), .uuid(let b)): return order(a, b)
        default: return numericOrder(other)
        }
    }

    /// The value as an exact integer, for the integer attribute types.
    private var integerValue: Int64? {
        switch self {
        case .int16(let v): Int64(v)
        case .int32(let v): Int64(v)
        case .int64(let v): v
        default: nil
        }
    }

    /// Orders two numbers: integers with integers exactly, an integer with a floating-point value without rounding
    /// the integer, anything else as `Double`; `nil` for non-numbers. NaN orders as `Double`'s operators make it
    /// (after everything, unequal to everything), as it always has.
    private func numericOrder(_ other: AttributeValue) -> ValueOrder? {
        func order(_ a: Double, _ b: Double) -> ValueOrder {
            a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        }
        switch (integerValue, other.integerValue) {
        case (let a?, let b?):
            return a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        case (let a?, nil):
            guard let b = other.numericValue else { return nil }
            return b.isNaN ? order(Double(a), b) : Self.order(a, b)
        case (nil, let b?):
            guard let a = numericValue else { return nil }
            guard !a.isNaN else { return order(a, Double(b)) }
            switch Self.order(b, a) {
            case .orderedAscending: return .orderedDescending
            case .orderedSame: return .orderedSame
            case .orderedDescending: return .orderedAscending
            }
        case (nil, nil):
            guard let a = numericValue, let b = other.numericValue else { return nil }
            return order(a, b)
        }
    }

    /// Orders an integer and a double exactly: the double's integral part is compared as an integer (it is exact
    /// once it is inside `Int64`'s range), then its fraction breaks the tie.
    private static func order(_ integer: Int64, _ double: Double) -> ValueOrder {
        if double >= 0x1p63 { return .orderedAscending }
        if double < -0x1p63 { return .orderedDescending }
        let whole = double.rounded(.towardZero)
        let wholeInteger = Int64(whole)
        if integer != wholeInteger { return integer < wholeInteger ? .orderedAscending : .orderedDescending }
        let fraction = double - whole
        return fraction > 0 ? .orderedAscending : (fraction < 0 ? .orderedDescending : .orderedSame)
    }
}
