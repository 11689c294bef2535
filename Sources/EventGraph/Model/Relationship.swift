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
    /// 0 in every instance but a prototype: the inverse, the delete rule, the counts and the original name live once
    /// per entity, in the model (see `PrototypeCapture`), so a fetched object initializes and releases nothing per
    /// relationship. In a prototype that ``ObjectModel`` builds, the number of this declaration in its record.
    @usableFromInline let declarationTag: UInt16

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
    @inlinable
    public init(
        inverse: String? = nil, deleteRule: RelationshipDeleteRule = .nullify, minimumCount: Int = 0,
        maximumCount: Int = 0, isOptional: Bool = true, originalName: String? = nil
    ) {
        declarationTag =
            PrototypeCapture.isActive
            ? PrototypeCapture.relationshipTag(
                inverse: inverse, deleteRule: deleteRule, minimumCount: minimumCount, maximumCount: maximumCount,
                isOptional: isOptional, originalName: originalName) : 0
    }

    /// Declares a relationship; the initial value must be empty (`nil` or `[]`), which the model checks when it
    /// builds the class's prototype.
    @inlinable
    public init(
        wrappedValue: Value, inverse: String? = nil, deleteRule: RelationshipDeleteRule = .nullify,
        minimumCount: Int = 0, maximumCount: Int = 0, isOptional: Bool = true, originalName: String? = nil
    ) {
        declarationTag =
            PrototypeCapture.isActive
            ? PrototypeCapture.relationshipTag(
                initialTargetCount: wrappedValue.relationshipTargets.count, inverse: inverse, deleteRule: deleteRule,
                minimumCount: minimumCount, maximumCount: maximumCount, isOptional: isOptional,
                originalName: originalName) : 0
    }

    @available(*, unavailable, message: "@Relationship is only available on ManagedObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("unreachable") }
        set { fatalError("unreachable") }
    }

    /// Reads and writes the targets through the enclosing object, keeping the inverse consistent.
    ///
    /// Inlinable, as ``Attribute``'s is, so that each model class gets a copy specialized for its object and value
    /// types: unspecialized, every set of `post.tags` looked up the generic metadata of `Set<Tag>` and its
    /// conformance at run time and mapped the set to an array through them (a fifth of the setter's time in a bulk
    /// insert's profile).
    @inlinable
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Self>
    ) -> Value {
        get {
            let index = PropertyStamps.index(in: object[keyPath: storageKeyPath].declarationTag, of: object)
            return Value(relationshipTargets: object.relationshipTargets(at: index))
        }
        set {
            let index = PropertyStamps.index(in: object[keyPath: storageKeyPath].declarationTag, of: object)
            object.setRelationshipTargets(newValue.relationshipTargets, at: index)
        }
    }
}

extension Relationship: PropertyIntrospection {
    static var tagOffset: Int? { MemoryLayout<Self>.offset(of: \Self.declarationTag) }

    func propertySeed(name: String, in session: PrototypeCapture.Session) -> PropertySeed {
        guard case .relationship(let options) = session.declaration(declarationTag, property: name) else {
            preconditionFailure("the wrapper of '\(name)' recorded an attribute, not a relationship")
        }
        return .relationship(
            RelationshipSeed(
                name: name, destination: Value.destinationType, isToMany: Value.isToMany, isOrdered: Value.isOrdered,
                inverseName: options.inverseName, deleteRule: options.deleteRule.deleteRule,
                minimumCount: options.minimumCount, maximumCount: options.maximumCount, isOptional: options.isOptional,
                originalName: options.originalName))
    }
}
