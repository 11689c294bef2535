import LogFormat
public import Synchronization

/// How a prototype instance tells the model what its ``Attribute`` and ``Relationship`` wrappers declare, while every
/// other instance's wrappers store nothing but a zero tag.
///
/// What a wrapper declares — its default value, its options, a relationship's inverse, delete rule, counts and
/// original name — is the same for every instance of the class, and the model holds it once per entity. Storing it
/// in each instance made a fetched `Post` of eight attributes and three relationships 664 bytes, and every fetch paid
/// to initialize and release those fields per object. So a wrapper's initializer looks at ``isActive`` first (one
/// relaxed atomic load): when no thread is building a prototype, it stores tag 0 and nothing else. ``ClassInfo``
/// builds its prototypes inside ``capture(_:)``, where each wrapper's initializer records its declaration in the
/// thread's session and stores the declaration's number (from 1), which ``ClassInfo`` reads back through `Mirror`
/// together with the property's name. Numbering, rather than the order of the initializers, matches a declaration to
/// its property even when an initializer assigns wrapped properties in another order than they are declared.
///
/// Another thread's objects made while a prototype is being built see ``isActive`` set, find no session of their own
/// and store 0 as usual.
@usableFromInline
enum PrototypeCapture {
    /// How many threads are inside ``capture(_:)`` now.
    @usableFromInline
    static let activeCount = Atomic<Int>(0)

    /// The session of the prototype being built on this thread (or in this task), if any.
    @TaskLocal static var current: Session?

    /// Whether some thread is building a prototype: the one check every wrapper's initializer makes.
    @inlinable
    static var isActive: Bool { activeCount.load(ordering: .relaxed) != 0 }

    /// The declarations recorded while one prototype was made, numbered from 1 in the order they were recorded.
    final class Session: Sendable {
        private let recorded = LockedValue<[Declaration]>([])

        /// The class whose prototype this session makes: its instances made in the session are not stamped (see
        /// ``PropertyStamps``); another class's, made by the prototype's initializer, are.
        let prototypeClass: ManagedObject.Type

        init(prototypeClass: ManagedObject.Type) {
            self.prototypeClass = prototypeClass
        }

        /// Records a declaration; returns its number (never 0).
        func record(_ declaration: Declaration) -> UInt16 {
            recorded.withLock { recorded in
                precondition(
                    recorded.count < Int(UInt16.max), "a prototype declares more than \(UInt16.max - 1) properties")
                recorded.append(declaration)
                return UInt16(recorded.count)
            }
        }

        /// The declaration numbered `tag`; a programmer error when the wrapper was not made in this session.
        func declaration(_ tag: UInt16, property name: String) -> Declaration {
            recorded.withLock { recorded in
                precondition(
                    tag > 0 && Int(tag) <= recorded.count,
                    "the wrapper of '\(name)' was not made while its class's prototype was built")
                return recorded[Int(tag) - 1]
            }
        }
    }

    /// What one wrapper declares.
    enum Declaration: Sendable {
        case attribute(defaultValue: AttributeValue, options: [AttributeOption])
        case relationship(RelationshipOptions)
    }

    /// A ``Relationship``'s arguments.
    struct RelationshipOptions: Sendable {
        var inverseName: String?
        var deleteRule: RelationshipDeleteRule
        var minimumCount: Int
        var maximumCount: Int
        var isOptional: Bool
        var originalName: String?
    }

    /// Runs `body` (which makes a prototype instance of `prototypeClass`) with a fresh session, and returns its
    /// result and the session.
    static func capture<Result>(of prototypeClass: ManagedObject.Type, _ body: () -> Result) -> (Result, Session) {
        let session = Session(prototypeClass: prototypeClass)
        activeCount.add(1, ordering: .relaxed)
        defer { activeCount.subtract(1, ordering: .relaxed) }
        let result = $current.withValue(session) { body() }
        return (result, session)
    }

    /// For ``Attribute``'s initializers while ``isActive``: records the declaration when this thread builds a
    /// prototype and returns its number, else 0.
    @usableFromInline @inline(never)
    static func attributeTag<Value: PersistentValue>(defaultValue: Value, options: [AttributeOption]) -> UInt16 {
        guard let session = current else { return 0 }
        return session.record(.attribute(defaultValue: defaultValue.attributeValue, options: options))
    }

    /// For ``Relationship``'s initializers while ``isActive``: as ``attributeTag(defaultValue:options:)``.
    @usableFromInline @inline(never)
    static func relationshipTag(
        initialTargetCount: Int = 0, inverse: String?, deleteRule: RelationshipDeleteRule, minimumCount: Int,
        maximumCount: Int, isOptional: Bool,
        originalName: String?
    ) -> UInt16 {
        guard let session = current else { return 0 }
        precondition(initialTargetCount == 0, "a relationship's initial value must be empty")
        precondition(minimumCount >= 0 && maximumCount >= 0, "relationship counts cannot be negative")
        return session.record(
            .relationship(
                RelationshipOptions(
                    inverseName: inverse, deleteRule: deleteRule, minimumCount: minimumCount,
                    maximumCount: maximumCount, isOptional: isOptional, originalName: originalName)))
    }
}
