package import LogFormat

/// How the entities and properties of a store's recorded model become those of a new model: the mapping a
/// migration replays every changeset of the old log through.
///
/// Compute one with ``inferred(fromStoreAt:to:)``; ``changes`` says, per entity and property, what the migration does.
/// The mapping works on changeset payloads (entity and property indices, values), never on managed objects, so a
/// migration streams the log and never holds two object graphs.
public struct MigrationMapping: Sendable {
    /// The model the store recorded (the old one).
    package let sourceSchema: SchemaPayload
    /// The model the store is migrated to.
    package let targetSchema: SchemaPayload
    /// Every change, entity by entity, in the target model's order, then the removed entities.
    public let changes: [MigrationChange]

    /// The new index of each old entity (`nil`: removed).
    let entityTargets: [UInt32?]
    /// Per old entity, the target of each old property (`nil`: dropped, or the entity is removed).
    let propertyTargets: [[PropertyTarget?]]
    /// Per new entity, each property's default in the new model (what a record that leaves it out means).
    let targetDefaults: [[PropertyValue]]

    /// Where one old property's values go, and how they change on the way.
    struct PropertyTarget: Hashable, Sendable {
        /// The property's index in the new entity.
        var index: UInt32
        /// The new type of a widened number attribute.
        var widenedType: AttributeType?
        /// The value that replaces null (an optional attribute made required, with its default).
        var nullReplacement: AttributeValue?
        /// A to-one relationship that became to-many.
        var becomesToMany = false
    }

    /// Whether the mapping changes nothing the log's bytes depend on (the store is already at the target shape).
    public var isIdentity: Bool {
        ModelShape.hash(of: sourceSchema.entities) == ModelShape.hash(of: targetSchema.entities)
            && sourceSchema.entities.map(\.name) == targetSchema.entities.map(\.name)
    }
}

/// One change a migration makes to an entity or property, with a sentence describing it.
public struct MigrationChange: Hashable, Sendable, CustomStringConvertible {
    /// What kind of change it is.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        case entityAdded, entityRemoved, entityRenamed, entityParentChanged
        case propertyAdded, propertyRemoved, propertyRenamed
        case numberWidened, madeRequired, madeOptional, toOneBecameToMany, orderingChanged
        case uniquenessConstraintAdded, uniquenessConstraintRemoved, indexesChanged
        /// Set by the code of a custom stage (``EntityMigration``).
        case computed
    }

    /// What kind of change it is.
    public var kind: Kind
    /// The entity (its new name, or its old one when removed).
    public var entityName: String
    /// The property (its new name, or its old one when removed); `nil` for changes of the entity.
    public var propertyName: String?
    /// A sentence describing the change.
    public var detail: String

    public var description: String {
        (propertyName.map { "\(entityName).\($0)" } ?? entityName) + ": " + detail
    }
}
