import LogFormat

/// A rule of the model that a value can break: what save-time validation checks of each property, and what a
/// migration's dry run reports of the existing objects (``StoreMigration/ValidationFailure``).
public enum ValidationRuleKind: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// A non-optional attribute is empty, or a non-optional to-one relationship has no target.
    case required
    /// A number is below ``AttributeDescription/minimumValue``.
    case minimumValue
    /// A number is above ``AttributeDescription/maximumValue``.
    case maximumValue
    /// A string or binary value is shorter than ``AttributeDescription/minimumLength``.
    case minimumLength
    /// A string or binary value is longer than ``AttributeDescription/maximumLength``.
    case maximumLength
    /// A string does not match ``AttributeDescription/pattern`` (or the pattern is not a regular expression).
    case pattern
    /// A to-many relationship has fewer objects than its minimum count.
    case minimumCount
    /// A to-many relationship has more objects than its maximum count.
    case maximumCount

    public var description: String { rawValue }
}

/// What save-time validation checks of one property: the few fields its loop reads for every object, so that the
/// loop does not copy the property's whole description (names, defaults, options) once per object and property.
///
/// Bitwise-copyable (no reference: a pattern is read from the description when there is one), so the loop's copy of
/// each rule per object retains and releases nothing (h103's profile: the rules' copies and destroys were ≈ 10 % of
/// a bulk insert's validation).
struct ValidationRule: Sendable, BitwiseCopyable {
    let index: Int
    let isRelationship: Bool
    /// A null attribute fails (non-optional and persistent), or an empty to-one (non-optional).
    let isRequired: Bool
    /// Whether an attribute has a range, length or pattern.
    let hasValueRules: Bool
    let isToMany: Bool
    /// A to-many's bounds; 0 for none.
    let minimumCount: Int
    let maximumCount: Int
    /// An attribute's value rules, as its description gives them (``AttributeDescription/minimumValue`` …): kept
    /// here so that checking them does not copy the description (its names and default) once per object.
    private(set) var minimumValue: Double?
    private(set) var maximumValue: Double?
    private(set) var minimumLength: Int?
    private(set) var maximumLength: Int?
    /// Whether the attribute has a ``AttributeDescription/pattern`` (read from its description when checked).
    private(set) var hasPattern = false

    /// The rule of a property, `nil` when it has nothing to check: a value can fail only a rule it has, and a
    /// non-optional persistent attribute can be null. Every relationship is checked.
    init?(_ property: PropertyDescription) {
        switch property {
        case .attribute(let a):
            let isRequired = !a.isOptional && !a.isTransient
            let hasValueRules =
                a.minimumValue != nil || a.maximumValue != nil || a.minimumLength != nil || a.maximumLength != nil
                || a.pattern != nil
            guard isRequired || hasValueRules else { return nil }
            self.init(
                index: a.index, isRelationship: false, isRequired: isRequired, hasValueRules: hasValueRules,
                isToMany: false, minimumCount: 0, maximumCount: 0)
            (minimumValue, maximumValue) = (a.minimumValue, a.maximumValue)
            (minimumLength, maximumLength, hasPattern) = (a.minimumLength, a.maximumLength, a.pattern != nil)
        case .relationship(let r):
            self.init(
                index: r.index, isRelationship: true, isRequired: !r.isOptional, hasValueRules: false,
                isToMany: r.isToMany, minimumCount: r.minimumCount, maximumCount: r.maximumCount)
        }
    }

    /// Whether some value can break the rule: an attribute's always; a relationship's when it is a required to-one
    /// or a to-many with a bound (every relationship has a rule, most of which nothing breaks).
    var canFail: Bool {
        guard isRelationship else { return true }
        return isToMany ? minimumCount > 0 || maximumCount > 0 : isRequired
    }

    private init(
        index: Int, isRelationship: Bool, isRequired: Bool, hasValueRules: Bool, isToMany: Bool, minimumCount: Int,
        maximumCount: Int
    ) {
        self.index = index
        self.isRelationship = isRelationship
        self.isRequired = isRequired
        self.hasValueRules = hasValueRules
        self.isToMany = isToMany
        self.minimumCount = minimumCount
        self.maximumCount = maximumCount
    }
}

/// One rule one object's value breaks: the property (its index in the entity), the rule and the sentence a
/// validation error shows.
struct RuleFailure: Hashable, Sendable {
    let propertyIndex: Int
    let rule: ValidationRuleKind
    let message: String
}

/// The regular expressions of the model's patterns, each compiled once per validator.
struct CompiledPatterns {
    private var regexes: [String: Regex<AnyRegexOutput>] = [:]

    mutating func regex(_ pattern: String) throws -> Regex<AnyRegexOutput> {
        if let regex = regexes[pattern] { return regex }
        let regex = try Regex(pattern)
        regexes[pattern] = regex
        return regex
    }
}

extension EntityDescription {
    /// The rules of this entity that the values of one object break — the one validator of the model's rules, run
    /// at save on a managed object's current values and by a migration's dry run on the migrated state's rows.
    ///
    /// - Parameters:
    ///   - checked: which properties' rules to check (by index); `nil`: all.
    ///   - isNull: whether the object's value of an attribute is null, for a caller that can tell without copying
    ///     the value (`nil` from it: read the value); asked only of attributes without value rules.
    ///   - value: the object's value of a property (by index); `nil` means the property's default.
    func ruleFailures(
        patterns: inout CompiledPatterns, checking checked: ((_ propertyIndex: Int) -> Bool)? = nil,
        isNull: ((_ propertyIndex: Int) -> Bool?)? = nil,
        value: (_ propertyIndex: Int) -> PropertyValue?
    ) -> [RuleFailure] {
        var failures: [RuleFailure] = []
        // A rule nothing breaks (an optional to-one, an unbounded to-many) is not given the value: reading it copies a
        // to-many list, and a bulk insert validates every new object.
        for rule in validationRules where rule.canFail && checked?(rule.index) ?? true {
            // An attribute that is only required is asked whether it is null, when the caller can tell without a copy.
            if !rule.isRelationship, !rule.hasValueRules, let isNull = isNull?(rule.index) {
                if isNull && rule.isRequired {
                    failures.append(RuleFailure(propertyIndex: rule.index, rule: .required, message: "is required"))
                }
                continue
            }
            let current = value(rule.index) ?? defaultValues[rule.index]
            func fail(_ kind: ValidationRuleKind, _ message: String) {
                failures.append(RuleFailure(propertyIndex: rule.index, rule: kind, message: message))
            }
            if rule.isRelationship {
                let count = current.references.count
                if !rule.isToMany {
                    if rule.isRequired && count == 0 { fail(.required, "is required") }
                    continue
                }
                if rule.minimumCount > 0 && count < rule.minimumCount {
                    fail(.minimumCount, "has \(count) objects, fewer than the minimum \(rule.minimumCount)")
                }
                if rule.maximumCount > 0 && count > rule.maximumCount {
                    fail(.maximumCount, "has \(count) objects, more than the maximum \(rule.maximumCount)")
                }
                continue
            }
            guard case .attribute(let value) = current, value != .null else {
                if rule.isRequired { fail(.required, "is required") }
                continue
            }
            guard rule.hasValueRules else { continue }
            if rule.minimumValue != nil || rule.maximumValue != nil, let number = value.numericValue {
                if let minimum = rule.minimumValue, number < minimum {
                    fail(.minimumValue, "is \(value.displayText), below the minimum \(minimum)")
                }
                if let maximum = rule.maximumValue, number > maximum {
                    fail(.maximumValue, "is \(value.displayText), above the maximum \(maximum)")
                }
            }
            if rule.minimumLength != nil || rule.maximumLength != nil,
                !value.lengthIsSurelyWithin(minimum: rule.minimumLength, maximum: rule.maximumLength),
                let length = value.length
            {
                if let minimum = rule.minimumLength, length < minimum {
                    fail(.minimumLength, "has length \(length), shorter than the minimum \(minimum)")
                }
                if let maximum = rule.maximumLength, length > maximum {
                    fail(.maximumLength, "has length \(length), longer than the maximum \(maximum)")
                }
            }
            if rule.hasPattern, let pattern = properties[rule.index].attribute?.pattern, case .string(let text) = value
            {
                do {
                    let regex = try patterns.regex(pattern)
                    if (try? regex.wholeMatch(in: text)) == nil {
                        fail(.pattern, "'\(text)' does not match the pattern \(pattern)")
                    }
                } catch {
                    fail(.pattern, "the pattern \(pattern) is not a valid regular expression")
                }
            }
        }
        return failures
    }
}
