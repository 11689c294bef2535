import Foundation
import LogFormat

/// Translates the parts of a `#Predicate` that compare a stored attribute with a constant into a row-level filter,
/// so a fetch can evaluate them on committed rows (and use an index) without creating objects.
///
/// Translated: `attribute == / != / < / <= / > / >= constant` (either side), `&&` of translatable parts, and a
/// string attribute's `contains(constant)` and `starts(with: constant)`. A conjunction with untranslatable parts
/// translates the others (the predicate is then still evaluated on the objects that pass); anything else is
/// left to the predicate.
///
/// Translation runs in two steps: the expression's *shape* (which parts translate, on which attributes, with which
/// comparison) becomes a ``PredicateTemplate``, kept in ``PredicateTemplateCache`` by the expression's type and the
/// entity; the template then reads this predicate's constants. A query repeated with other captured values finds
/// its template and skips the dynamic casts to the expression protocols that finding the shape takes.
struct PredicateTranslation {
    /// The filter equivalent to the translated parts.
    var node: ResolvedFilter.Node
    /// Whether the whole predicate was translated (it need not be evaluated on objects).
    var isComplete: Bool

    init?<T: ManagedObject>(_ predicate: Predicate<T>, entity: EntityDescription) {
        guard let (node, isComplete) = PredicateTemplateCache.shared.translate(predicate.expression, entity: entity)
        else { return nil }
        self.node = node
        self.isComplete = isComplete
    }
}

/// The translatable shape of a predicate expression, with its constants left as parameters: what
/// ``PredicateTranslator`` finds by walking the expression once, applied to each expression of the same shape by
/// ``instantiate(_:)``.
///
/// The readers are closures made while the concrete expression types were known, so applying a template casts each
/// operand to its concrete type (a metadata comparison) instead of asking the runtime for a protocol conformance.
indirect enum PredicateTemplate: Sendable {
    /// `lhs && rhs`.
    case conjunction(operands: @Sendable (Any) -> (Any, Any), left: PredicateTemplate, right: PredicateTemplate)
    /// `attribute <op> constant` (or the flipped form): the attribute's key path, which the expression must still
    /// name for the template to apply to it, and how to read the constant.
    case comparison(Comparison)
    /// A part that does not translate whatever its values, identified by the key paths it reads (an expression of
    /// the same type that reads others may translate).
    case untranslatable(keyPaths: [KeptKeyPath])

    /// A key path a template keeps, compared by identity: the runtime makes a key path literal without arguments once
    /// per call site, so a predicate site passes the same object each time, while another site (or a key path with
    /// captured arguments, made anew each time) gets a template of its own.
    ///
    /// `@unchecked Sendable`: across threads the object is only retained, released and compared by address (`===`),
    /// never read, and a key path is immutable once made; `AnyKeyPath` is not `Sendable` because a key path's
    /// captured subscript arguments may not be, and those are never touched here.
    struct KeptKeyPath: @unchecked Sendable, Equatable {
        let keyPath: AnyKeyPath

        static func == (lhs: KeptKeyPath, rhs: KeptKeyPath) -> Bool { lhs.keyPath === rhs.keyPath }
    }

    struct Comparison: Sendable {
        /// Reads the operands and the operator: `PredicateExpressions.Comparison` holds its operator as a value, so
        /// expressions of one type may compare differently.
        let operands: @Sendable (Any) -> (Any, Any, FetchFilter.Comparison)
        /// The operator as written (before flipping), which the expression must have for the template to apply.
        let writtenComparison: FetchFilter.Comparison
        /// Whether the key path is the left operand (otherwise the comparison was flipped).
        let isAttributeOnLeft: Bool
        let keyPath: KeptKeyPath
        let readKeyPath: @Sendable (Any) -> AnyKeyPath
        let readConstant: @Sendable (Any) -> AttributeValue?
        let index: Int
        let type: AttributeType
        let comparison: FetchFilter.Comparison
    }

    /// The result of applying a template to an expression.
    enum Instance {
        /// The translated filter and whether it is exact, or `nil` when no part translates with these values.
        case translated((ResolvedFilter.Node, Bool)?)
        /// The expression names other key paths than the template: it has another shape.
        case otherShape
    }

    /// Whether this template translates `expression` (it has its shape and names its key paths).
    func applies(to expression: Any) -> Bool {
        if case .translated = instantiate(expression) { return true }
        return false
    }

    /// The filter of `expression`, an expression of the template's type, with its constants.
    func instantiate(_ expression: Any) -> Instance {
        switch self {
        case .untranslatable(let keyPaths):
            return PredicateTranslator.keyPaths(of: expression) == keyPaths ? .translated(nil) : .otherShape
        case .conjunction(let operands, let leftTemplate, let rightTemplate):
            let (lhs, rhs) = operands(expression)
            guard case .translated(let left) = leftTemplate.instantiate(lhs),
                case .translated(let right) = rightTemplate.instantiate(rhs)
            else { return .otherShape }
            switch (left, right) {
            case (let l?, let r?): return .translated((.and([l.0, r.0]), l.1 && r.1))
            case (let l?, nil): return .translated((l.0, false))
            case (nil, let r?): return .translated((r.0, false))
            case (nil, nil): return .translated(nil)
            }
        case .comparison(let template):
            let (lhs, rhs, written) = template.operands(expression)
            guard written == template.writtenComparison else { return .otherShape }
            let (path, constant) = template.isAttributeOnLeft ? (lhs, rhs) : (rhs, lhs)
            guard template.readKeyPath(path) === template.keyPath.keyPath else { return .otherShape }
            guard let value = template.readConstant(constant),
                Self.translates(value, template.comparison, on: template.type)
            else { return .translated(nil) }
            return .translated((.compare(template.index, template.comparison, value), true))
        }
    }

    /// Whether a comparison with a constant translates for this constant (the checks that depend on the value).
    private static func translates(_ value: AttributeValue, _ op: FetchFilter.Comparison, on type: AttributeType)
        -> Bool
    {
        guard value == .null || value.fits(type) else { return false }
        switch op {
        case .contains, .beginsWith, .endsWith:
            guard type == .string, case .string(let text) = value, !text.isEmpty else { return false }
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard value != .null, AttributeIndex.canLocate(value, in: type) else { return false }
        case .equal, .notEqual:
            guard type != .binary, type != .transformable else { return false }
        }
        return true
    }
}

/// Finds the ``PredicateTemplate`` of an expression by walking it (dynamic casts to the expression protocols).
struct PredicateTranslator {
    let entity: EntityDescription

    /// The template of an expression.
    func template(_ expression: Any) -> PredicateTemplate {
        if let conjunction = expression as? any TranslatableConjunction {
            return .conjunction(
                operands: type(of: conjunction).operandReader, left: template(conjunction.leftOperand),
                right: template(conjunction.rightOperand))
        }
        if let comparison = expression as? any TranslatableComparison, let translated = comparisonTemplate(comparison) {
            return .comparison(translated)
        }
        return .untranslatable(keyPaths: Self.keyPaths(of: expression))
    }

    /// The key paths that the comparisons and conjunctions of an expression read directly, in order: what tells
    /// apart two untranslatable expressions of the same type (`$0.date == day` and `$0.computedDate == day`).
    static func keyPaths(of expression: Any) -> [PredicateTemplate.KeptKeyPath] {
        if let conjunction = expression as? any TranslatableConjunction {
            return keyPaths(of: conjunction.leftOperand) + keyPaths(of: conjunction.rightOperand)
        }
        if let comparison = expression as? any TranslatableComparison {
            return [comparison.leftOperand, comparison.rightOperand].compactMap {
                ($0 as? any TranslatableKeyPath).map { PredicateTemplate.KeptKeyPath(keyPath: $0.anyKeyPath) }
            }
        }
        return []
    }

    private func comparisonTemplate(_ comparison: any TranslatableComparison) -> PredicateTemplate.Comparison? {
        let written = comparison.comparison
        var op = written
        var isAttributeOnLeft = true
        var attribute = self.attribute(comparison.leftOperand)
        var constant = comparison.rightOperand as? any TranslatableConstant
        if attribute == nil, comparison.isSymmetricCapable {
            // `constant < attribute` is `attribute > constant`.
            attribute = self.attribute(comparison.rightOperand)
            constant = comparison.leftOperand as? any TranslatableConstant
            op = op.flipped
            isAttributeOnLeft = false
        }
        guard let (path, index, type) = attribute, let constant else { return nil }
        return PredicateTemplate.Comparison(
            operands: Swift.type(of: comparison).operandReader, writtenComparison: written,
            isAttributeOnLeft: isAttributeOnLeft,
            keyPath: PredicateTemplate.KeptKeyPath(keyPath: path.anyKeyPath),
            readKeyPath: Swift.type(of: path).keyPathReader,
            readConstant: Swift.type(of: constant).constantReader, index: index, type: type, comparison: op)
    }

    /// The key path expression, property index and type of an operand that reads a stored attribute of the
    /// predicate's object directly (`$0.title`; `$0.title.count` and `$0.author.name` nest key path expressions, and
    /// a computed property that reads `title` is not `title`'s key path).
    private func attribute(_ operand: Any) -> (any TranslatableKeyPath, Int, AttributeType)? {
        guard let path = operand as? any TranslatableKeyPath, path.isOnVariable else { return nil }
        let keyPath = path.anyKeyPath
        guard let index = PropertyKeyPathResolver.directAttributeIndex(of: keyPath), index < entity.properties.count,
            let description = entity.properties[index].attribute,
            !description.isTransient, Self.translatableTypes.contains(description.type.attributeType),
            let valueType = type(of: keyPath).valueType as? any PersistentValue.Type,
            valueType.storedValueType == description.type
        else { return nil }
        return (path, index, description.type.attributeType)
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

protocol TranslatableConjunction: SendableMetatype {
    var leftOperand: Any { get }
    var rightOperand: Any { get }
}

protocol TranslatableComparison: SendableMetatype {
    var comparison: FetchFilter.Comparison { get }
    var leftOperand: Any { get }
    var rightOperand: Any { get }
    /// Whether the operands may be swapped (with the comparison flipped).
    var isSymmetricCapable: Bool { get }
}

protocol TranslatableKeyPath: SendableMetatype {
    var anyKeyPath: AnyKeyPath { get }
    var isOnVariable: Bool { get }
}

protocol TranslatableConstant: SendableMetatype {
    var attributeValue: AttributeValue? { get }
    /// Reads the constant of an expression of this type (see ``PredicateTemplate``).
    static var constantReader: @Sendable (Any) -> AttributeValue? { get }
}

extension TranslatableConjunction {
    /// Reads the operands of an expression of this type (see ``PredicateTemplate``).
    static var operandReader: @Sendable (Any) -> (Any, Any) {
        { expression in
            let conjunction = expression as! Self
            return (conjunction.leftOperand, conjunction.rightOperand)
        }
    }
}

extension TranslatableComparison {
    /// Reads the operands and the operator of an expression of this type (see ``PredicateTemplate``).
    static var operandReader: @Sendable (Any) -> (Any, Any, FetchFilter.Comparison) {
        { expression in
            let comparison = expression as! Self
            return (comparison.leftOperand, comparison.rightOperand, comparison.comparison)
        }
    }
}

extension TranslatableKeyPath {
    /// Reads the key path of an expression of this type (see ``PredicateTemplate``).
    static var keyPathReader: @Sendable (Any) -> AnyKeyPath {
        { ($0 as! Self).anyKeyPath }
    }
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

    /// For a constant whose static type is a ``PersistentValue``, a reader that converts it without asking for the
    /// conformance again; otherwise the dynamic lookup of ``attributeValue``.
    static var constantReader: @Sendable (Any) -> AttributeValue? {
        if let persistent = Output.self as? any PersistentValue.Type { return Self.reader(persistent) }
        return { ($0 as! Self).attributeValue }
    }

    private static func reader<Persistent: PersistentValue>(_: Persistent.Type) -> @Sendable (Any) -> AttributeValue? {
        { ($0 as? PredicateExpressions.Value<Persistent>)?.value.attributeValue }
    }
}
