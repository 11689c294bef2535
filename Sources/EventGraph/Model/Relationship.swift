import LogFormat

/// Declares a relationship of a ``ManagedObject`` subclass: to-one (`Target?`), ordered to-many (`[Target]`)
/// or unordered to-many (`Set<Target>`).
///
/// Name the inverse relationship so that both sides stay consistent automatically:
/// ```swift
/// final class Post: ManagedObject {
///     @Relationship(inverse: "posts") var author: Author?
///     @Relationship(inverse: "posts") var tags: Set<Tag>
/// }
/// final class Author: ManagedObject {
///     @Relationship(inverse: "author", deleteRule: .cascade) var posts: [Post]
/// }
/// ```
@propertyWrapper
public struct Relationship<Value: RelationshipValue> {
    let inverseName: String?
    let deleteRule: RelationshipDeleteRule
    let minimumCount: Int
    let maximumCount: Int
    let isOptional: Bool
    let originalName: String?

    /// Declares a relationship.
    ///
    /// - Parameters:
    ///   - inverse: the name of the inverse relationship in the destination class, if any.
    ///   - deleteRule: what deleting this object does to the targets.
    ///   - minimumCount: the fewest targets a to-many relationship may have when saved (0: no minimum).
    ///   - maximumCount: the most targets a to-many relationship may have when saved (0: no maximum).
    ///   - isOptional: whether a to-one relationship may be empty when saved.
    ///   - originalName: the relationship's name in the previous model version, when it was renamed (migration
    ///     carries its targets over).
    public init(
        inverse: String? = nil, deleteRule: RelationshipDeleteRule = .nullify, minimumCount: Int = 0,
        maximumCount: Int = 0, isOptional: Bool = true, originalName: String? = nil
    ) {
        precondition(minimumCount >= 0 && maximumCount >= 0, "relationship counts cannot be negative")
        self.inverseName = inverse
        self.deleteRule = deleteRule
        self.minimumCount = minimumCount
        self.maximumCount = maximumCount
        self.isOptional = isOptional
        self.originalName = originalName
    }

    /// Declares a relationship; the initial value must be empty (`nil` or `[]`).
    public init(
        wrappedValue: Value, inverse: String? = nil, deleteRule: RelationshipDeleteRule = .nullify,
        minimumCount: Int = 0, maximumCount: Int = 0, isOptional: Bool = true, originalName: String? = nil
    ) {
        precondition(wrappedValue.relationshipTargets.isEmpty, "a relationship's initial value must be empty")
        self.init(
            inverse: inverse, deleteRule: deleteRule, minimumCount: minimumCount, maximumCount: maximumCount,
            isOptional: isOptional, originalName: originalName)
    }

    @available(*, unavailable, message: "@Relationship is only available on ManagedObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("unreachable") }
        set { fatalError("unreachable") }
    }

    /// Reads and writes the targets through the enclosing object, keeping the inverse consistent.
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        get {
            let index = PropertySlotCache.index(of: storageKeyPath, declaredIn: Object.self)
            return Value(relationshipTargets: object.relationshipTargets(at: index))
        }
        set {
            let index = PropertySlotCache.index(of: storageKeyPath, declaredIn: Object.self)
            object.setRelationshipTargets(newValue.relationshipTargets, at: index)
        }
    }
}

extension Relationship: PropertyIntrospection {
    func propertySeed(name: String) -> PropertySeed {
        .relationship(
            RelationshipSeed(
                name: name, destination: Value.destinationType, isToMany: Value.isToMany, isOrdered: Value.isOrdered,
                inverseName: inverseName, deleteRule: deleteRule.deleteRule, minimumCount: minimumCount,
                maximumCount: maximumCount, isOptional: isOptional, originalName: originalName))
    }
}
