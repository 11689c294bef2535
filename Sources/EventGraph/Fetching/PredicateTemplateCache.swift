import LogFormat

/// The ``PredicateTemplate``s found so far, by the expression's type and the entity: a query that runs again with
/// other captured values (`#Predicate { $0.date == day }` for each `day`) translates without walking its expression
/// with dynamic casts again.
///
/// An expression's type fixes its operators and the types of its operands, not which key paths it reads (`$0.date`
/// and `$0.updated` have the same type), so each type keeps a short list of templates and one applies only when the
/// expression names its key paths. The values are never part of the key: each use reads its own constants and checks
/// them as a first translation would (an empty `contains` string, a `nil` in a range comparison), so a captured value
/// that changes between calls gets the filter its own value gives. Shared by every context and thread, behind a lock
/// held only to look up or add a template (never while one is applied).
final class PredicateTemplateCache: Sendable {
    /// The cache of the process.
    static let shared = PredicateTemplateCache()

    /// At most this many expression types are kept (a program has a bounded set of `#Predicate` sites; a limit on
    /// everything), and at most ``templatesPerKey`` templates for one type and entity.
    static let keyLimit = 1_024
    static let templatesPerKey = 8

    struct Key: Hashable, Sendable {
        let expressionType: ObjectIdentifier
        let entity: ObjectIdentifier
    }

    /// The templates of each key. The entity is held so that its address, part of the key, is never reused by
    /// another entity while its templates are kept.
    private let entries = LockedValue<[Key: (entity: EntityDescription, templates: [PredicateTemplate])]>([:])

    /// The number of expression types kept (for tests).
    var count: Int { entries.withLock { $0.count } }

    /// The number of templates kept for all types (for tests: a predicate site run again finds its template, it does
    /// not add one).
    var templateCount: Int { entries.withLock { $0.values.reduce(0) { $0 + $1.templates.count } } }

    /// The translated filter of `expression` and whether it is exact; `nil` when nothing translates.
    func translate(_ expression: Any, entity: EntityDescription) -> (ResolvedFilter.Node, Bool)? {
        let key = Key(expressionType: ObjectIdentifier(type(of: expression)), entity: ObjectIdentifier(entity))
        let cached = entries.withLock { $0[key]?.templates } ?? []
        for template in cached {
            if case .translated(let result) = template.instantiate(expression) { return result }
        }
        let template = PredicateTranslator(entity: entity).template(expression)
        entries.withLock { entries in
            guard entries[key] != nil || entries.count < Self.keyLimit else { return }
            // Threads that missed together each made a template of the same shape: keep the first one only.
            let kept = entries[key]?.templates ?? []
            for other in kept where other.applies(to: expression) { return }
            if entries[key, default: (entity, [])].templates.count < Self.templatesPerKey {
                entries[key, default: (entity, [])].templates.append(template)
            }
        }
        guard case .translated(let result) = template.instantiate(expression) else {
            preconditionFailure("a predicate template does not apply to the expression it was made from")
        }
        return result
    }
}
