/// The declared type of a ``Relationship``: `Target?` (to-one), `[Target]` (ordered to-many) or `Set<Target>`
/// (unordered to-many).
public protocol RelationshipValue {
    /// The destination class.
    static var destinationType: ManagedObject.Type { get }
    /// Whether the relationship holds many objects.
    static var isToMany: Bool { get }
    /// Whether a to-many relationship keeps its order.
    static var isOrdered: Bool { get }
    /// The value with no targets.
    static var empty: Self { get }
    /// Creates the value from its targets (all of the destination class).
    init(relationshipTargets: [ManagedObject])
    /// The targets, in order.
    var relationshipTargets: [ManagedObject] { get }
}

extension Optional: RelationshipValue where Wrapped: ManagedObject {
    public static var destinationType: ManagedObject.Type { Wrapped.self }
    public static var isToMany: Bool { false }
    public static var isOrdered: Bool { false }
    public static var empty: Self { nil }
    @inlinable
    public init(relationshipTargets: [ManagedObject]) {
        self = relationshipTargets.first.map { $0 as! Wrapped }
    }
    @inlinable
    public var relationshipTargets: [ManagedObject] { map { [$0] } ?? [] }
}

extension Array: RelationshipValue where Element: ManagedObject {
    public static var destinationType: ManagedObject.Type { Element.self }
    public static var isToMany: Bool { true }
    public static var isOrdered: Bool { true }
    public static var empty: Self { [] }
    @inlinable
    public init(relationshipTargets: [ManagedObject]) {
        self = relationshipTargets.map { $0 as! Element }
    }
    @inlinable
    public var relationshipTargets: [ManagedObject] { map { $0 } }
}

extension Set: RelationshipValue where Element: ManagedObject {
    public static var destinationType: ManagedObject.Type { Element.self }
    public static var isToMany: Bool { true }
    public static var isOrdered: Bool { false }
    public static var empty: Self { [] }
    @inlinable
    public init(relationshipTargets: [ManagedObject]) {
        self = Set(relationshipTargets.lazy.map { $0 as! Element })
    }
    @inlinable
    public var relationshipTargets: [ManagedObject] { map { $0 } }
}
