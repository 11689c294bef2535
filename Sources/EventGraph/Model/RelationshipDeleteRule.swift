package import LogFormat

/// What deleting an object does to the targets of one of its relationships.
public enum RelationshipDeleteRule: Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// The targets stay; their inverse no longer points to the deleted object (the default).
    case nullify
    /// The targets are deleted too.
    case cascade
    /// The delete fails while the relationship has targets.
    case deny
    /// Nothing is done to the targets; their inverse may point to the deleted object until changed.
    case noAction

    /// The rule's name (`nullify`, `cascade`, `deny`, `noAction`).
    public var description: String { deleteRule.description }
}

extension RelationshipDeleteRule {
    /// The public form of a schema's delete rule.
    package init(_ rule: DeleteRule) {
        switch rule {
        case .nullify: self = .nullify
        case .cascade: self = .cascade
        case .deny: self = .deny
        case .noAction: self = .noAction
        }
    }

    /// The rule as the schema records it.
    package var deleteRule: DeleteRule {
        switch self {
        case .nullify: .nullify
        case .cascade: .cascade
        case .deny: .deny
        case .noAction: .noAction
        }
    }
}
