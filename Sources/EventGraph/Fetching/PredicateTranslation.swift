import Foundation
import LogFormat

/// Translates the parts of a `#Predicate` that compare a stored attribute with a constant into a row-level filter,
/// so a fetch can evaluate them on committed rows (and use an index) without creating objects.
///
/// Translated: `attribute == / != / < / <= / > / >= constant` (either side), `&&` of translatable parts, and a
/// string attribute's `contains(constant)` and `starts(with: constant)`. A conjunction with untranslatable parts
/// translates the others (the predicate is then still evaluated on the objects that pass); anything else is
/// left to the predicate.
struct PredicateTranslation {
    /// The filter equivalent to the translated parts.
    var node: ResolvedFilter.Node
    /// Whether the whole predicate was translated (it need not be evaluated on objects).
    var isComplete: Bool

    init?<T: ManagedObject>(_ predicate: Predicate<T>, entity: EntityDescription) {
        let translator = PredicateTranslator(entity: entity)
        guard let (node, isComplete) = translator.translate(predicate.expression) else { return nil }
        self.node = node
        self.isComplete = isComplete
    }
}

struct PredicateTranslator {
    let entity: EntityDescription

    /// The translated filter of an expression and whether it is exact; `nil` when nothing translates.
    func translate(_ expression: Any) -> (ResolvedFilter.Node, Bool)? {
        if let conjunction = expression as? any TranslatableConjunction {
            let left = translate(conjunction.leftOperand)
            let right = translate(conjunction.rightOperand)
            switch (left, right) {
            case (let l?, let r?): return (.and([l.0, r.0]), l.1 && r.1)
            case (let l?, nil): return (l.0, false)
            case (nil, let r?): return (r.0, false)
            case (nil, nil): return nil
            }
        }
        if let comparison = expression as? any TranslatableComparison {
            return comparisonNode(comparison).map { ($0, true) }
        }
        return nil
    }

    private func comparisonNode(_ comparison: any TranslatableComparison) -> ResolvedFilter.Node? {
        var op = comparison.comparison
        var attribute = self.attribute(comparison.leftOperand)
        var constant = comparison.rightOperand as? any TranslatableConstant
        if attribute == nil, comparison.isSymmetricCapable {
            // `constant < attribute` is `attribute > constant`.
            attribute = self.attribute(comparison.rightOperand)
            constant = comparison.leftOperand as? any TranslatableConstant
            op = op.flipped
        }
        guard let (index, type) = attribute, let constant, let value = constant.attributeValue else { return nil }
        guard value == .null || value.fits(type) else { return nil }
        switch op {
        case .contains, .beginsWith, .endsWith:
            guard type == .string, case .string(let text) = value, !text.isEmpty else { return nil }
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard value != .null, AttributeIndex.canLocate(value, in: type) else { return nil }
        case .equal, .notEqual:
            guard type != .binary, type != .transformable else { return nil }
        }
        return .compare(index, op, value)
    }

    /// The property index and type of a key path expression that reads a stored attribute of the predicate's
    /// object directly (`$0.title`; `$0.title.count` and `$0.author.name` nest key path expressions, and a computed
    /// property that reads `title` is not `title`'s key path).
    private func attribute(_ operand: Any) -> (Int, AttributeType)? {
        guard let path = operand as? any TranslatableKeyPath, path.isOnVariable else { return nil }
        let keyPath = path.anyKeyPath
        guard let index = PropertyKeyPathResolver.directAttributeIndex(of: keyPath), index < entity.properties.count,
            let description = entity.properties[index].attribute,
            !description.isTransient, Self.translatableTypes.contains(description.type.attributeType),
            let valueType = type(of: keyPath).valueType as? any PersistentValue.Type,
            valueType.storedValueType == description.type
        else { return nil }
        return (index, description.type.attributeType)
    }

    /// Types whose stored form compares exactly as the Swift values do.
    private static let translatableTypes: Set<AttributeType> = [
        .int16, .int32, .int64, .double, .float, .bool, .string, .date, .uuid, .url,
    ]
}

extension FetchFilter.Comparison {
    fileprivate var flipped: FetchFilter.Comparison {
        switch self {
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        default: self
        }
    }
}

// MARK: - Expression shapes

protocol TranslatableConjunction {
    var leftOperand: Any { get }
    var rightOperand: Any { get }
}

protocol TranslatableComparison {
    var comparison: FetchFilter.Comparison { get }
    var leftOperand: Any { get }
    var rightOperand: Any { get }
    /// Whether the operands may be swapped (with the comparison flipped).
    var isSymmetricCapable: Bool { get }
}

protocol TranslatableKeyPath {
    var anyKeyPath: AnyKeyPath { get }
    var isOnVariable: Bool { get }
}

protocol TranslatableConstant {
    var attributeValue: AttributeValue? { get }
}

extension PredicateExpressions.Conjunction: TranslatableConjunction {
    var leftOperand: Any { lhs }
    var rightOperand: Any { rhs }
}

extension PredicateExpressions.Equal: TranslatableComparison {
    var comparison: FetchFilter.Comparison { .equal }
    var leftOperand: Any { lhs }
    var rightOperand: Any { rhs }
    var isSymmetricCapable: Bool { true }
}

extension PredicateExpressions.NotEqual: TranslatableComparison {
    var comparison: FetchFilter.Comparison { .notEqual }
    var leftOperand: Any { lhs }
    var rightOperand: Any { rhs }
    var isSymmetricCapable: Bool { true }
}

extension PredicateExpressions.Comparison: TranslatableComparison {
    var comparison: FetchFilter.Comparison {
        switch op {
        case .lessThan: .less
        case .lessThanOrEqual: .lessOrEqual
        case .greaterThan: .greater
        case .greaterThanOrEqual: .greaterOrEqual
        @unknown default: .equal
        }
    }
    var leftOperand: Any { lhs }
    var rightOperand: Any { rhs }
    var isSymmetricCapable: Bool {
        switch op {
        case .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual: true
        @unknown default: false
        }
    }
}

extension PredicateExpressions.CollectionContainsCollection: TranslatableComparison {
    var comparison: FetchFilter.Comparison { .contains }
    var leftOperand: Any { base }
    var rightOperand: Any { other }
    var isSymmetricCapable: Bool { false }
}

extension PredicateExpressions.SequenceStartsWith: TranslatableComparison {
    var comparison: FetchFilter.Comparison { .beginsWith }
    var leftOperand: Any { base }
    var rightOperand: Any { prefix }
    var isSymmetricCapable: Bool { false }
}

extension PredicateExpressions.KeyPath: TranslatableKeyPath {
    var anyKeyPath: AnyKeyPath { keyPath }
    var isOnVariable: Bool { root is any TranslatableVariable }
}

protocol TranslatableVariable {}
extension PredicateExpressions.Variable: TranslatableVariable {}

extension PredicateExpressions.Value: TranslatableConstant {
    var attributeValue: AttributeValue? {
        (value as? any PersistentValue)?.attributeValue
    }
}
