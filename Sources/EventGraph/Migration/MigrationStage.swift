/// One step of a ``MigrationPlan``: from the previous version of the model to ``targetModel``, inferred or with code
/// (SwiftData's `MigrationStage`).
///
/// A custom stage still infers everything it can (added, removed, renamed and widened properties); its
/// ``EntityMigration``s compute the rest — a type change such as String → Int, or an entity split into two — from
/// each old object's values, read through the dynamic key-value API.
public struct MigrationStage: Sendable {
    /// The model this stage migrates to.
    public let targetModel: ObjectModel
    /// The code of a custom stage, per old entity (empty for an inferred stage).
    public let entityMigrations: [EntityMigration]

    /// A stage that only infers (a lightweight migration).
    public static func inferred(to model: ObjectModel) -> MigrationStage {
        MigrationStage(targetModel: model, entityMigrations: [])
    }

    /// A stage whose code computes what cannot be inferred, entity by entity.
    ///
    /// A programmer error when two migrations name the same old entity.
    public static func custom(to model: ObjectModel, _ migrations: [EntityMigration]) -> MigrationStage {
        precondition(
            Set(migrations.map(\.entityName)).count == migrations.count,
            "a custom migration stage has one EntityMigration per old entity")
        return MigrationStage(targetModel: model, entityMigrations: migrations)
    }
}

/// The code a custom ``MigrationStage`` runs for the objects of one old entity.
///
/// `migrate` runs whenever an object of the entity is inserted or changed in the old log (and for every such
/// object of a checkpoint), with the object's complete old values; what it sets replaces what inference would
/// write. History is kept: each run's result is written in the transaction that changed the old object.
public struct EntityMigration: Sendable {
    /// The old entity whose objects the code migrates (its name in the previous version).
    public let entityName: String
    /// The properties of the new entity the code sets (names in the new version); inference leaves them alone, so a
    /// property whose type changed is not refused.
    public let computedPropertyNames: Set<String>
    /// The code.
    public let migrate: @Sendable (MigratingObject, inout MigratedObject) throws -> Void

    /// The code for the objects of `entityName`, which sets the new entity's `computing` properties.
    public init(
        entity entityName: String, computing: Set<String>,
        migrate: @escaping @Sendable (MigratingObject, inout MigratedObject) throws -> Void
    ) {
        self.entityName = entityName
        self.computedPropertyNames = computing
        self.migrate = migrate
    }
}

/// An object of the old model as a custom migration stage reads it: every attribute by name, and the objects its
/// relationships lead to.
public struct MigratingObject: Sendable {
    /// The old entity's name.
    public let entityName: String
    /// The object's key in the store (the same in the new log).
    public let key: UInt64
    let values: [String: StoredValue]
    /// The targets of each relationship, by name (a to-one's target is a list of one; foreign stores' objects are
    /// left out).
    let relationships: [String: [MigrationObjectReference]]

    /// The value of an attribute of the old model; `nil` when the old entity has no attribute of that name.
    public func value(forKey key: String) -> StoredValue? { values[key] }

    /// The object a to-one relationship of the old model leads to; `nil` when it leads nowhere, or the old entity
    /// has no relationship of that name. Only the reference is read: a stage sees one object's values at a time.
    public func relatedObject(forKey key: String) -> MigrationObjectReference? { relationships[key]?.first }

    /// The objects a to-many relationship of the old model leads to, in the order the log recorded them (empty when
    /// the old entity has no relationship of that name; a to-one gives its target alone).
    public func relatedObjects(forKey key: String) -> [MigrationObjectReference] { relationships[key] ?? [] }
}

/// An object of the store as a custom migration stage sees it through a relationship: its entity under the old
/// model, and its key (which the object keeps under the new model).
public struct MigrationObjectReference: Sendable, Hashable, CustomStringConvertible {
    /// The old entity's name.
    public let entityName: String
    /// The object's key.
    public let key: UInt64

    /// "Author #3".
    public var description: String { "\(entityName) #\(key)" }
}

/// What a custom migration stage writes for one old object: the object under the new model, and objects of other
/// entities created beside it (an entity split).
public struct MigratedObject: Sendable {
    /// The new entity's name.
    public let entityName: String
    /// Attribute values set on the object, by name.
    var values: [String: StoredValue] = [:]
    /// Relationships of the object set to existing objects, by name.
    var relationships: [String: [MigrationObjectReference]] = [:]
    /// Objects created beside it, by the name of the relationship of this object that leads to them.
    var relatedObjects: [String: CreatedObject] = [:]

    /// An object the code creates beside the migrated one.
    struct CreatedObject {
        var values: [String: StoredValue]
        var relationships: [String: [MigrationObjectReference]]
    }

    init(entityName: String) { self.entityName = entityName }

    /// Sets an attribute of the new object (it must be one of the ``EntityMigration/computedPropertyNames``, or a
    /// property inference maps: the code's value wins).
    public mutating func setValue(_ value: StoredValue, forKey key: String) { values[key] = value }

    /// Relates the new object through its to-one relationship `key` to the object `target` of the old store
    /// becomes (`nil`: to none). The relationship must be one of the ``EntityMigration/computedPropertyNames``; its
    /// inverse, on the target, is written too (the migration treats the inverse as computed as well).
    ///
    /// The target's entity must not be one the same stage migrates with code (a programmer error).
    public mutating func setRelationship(to target: MigrationObjectReference?, forKey key: String) {
        relationships[key] = target.map { [$0] } ?? []
    }

    /// Relates the new object through its to-many relationship `key` to the objects `targets` of the old store
    /// become, in this order; the inverse is written on each target, as
    /// the to-one `setRelationship(to:forKey:)` does.
    public mutating func setRelationship(to targets: [MigrationObjectReference], forKey key: String) {
        relationships[key] = targets
    }

    /// Creates an object of the destination entity of the relationship `key` of this object, with the attribute
    /// values `values`, and relates the two (both sides: the relationship and its inverse). Running the code again
    /// for a later change of the old object updates the same created object; deleting the old object deletes it.
    ///
    /// `relationships` relates the created object to existing objects of the store, by the created entity's
    /// relationship names (a to-one takes a list of at most one), with their inverses, as
    /// the to-many `setRelationship(to:forKey:)` does; name each of them in
    /// ``EntityMigration/computedPropertyNames`` as `"Entity.relationship"`.
    ///
    /// Calling it again for the same `key` replaces the values.
    public mutating func setRelatedObject(
        _ values: [String: StoredValue], relating relationships: [String: [MigrationObjectReference]] = [:],
        forKey key: String
    ) {
        relatedObjects[key] = CreatedObject(values: values, relationships: relationships)
    }
}

/// The versions of a model and the stages between them, oldest first (SwiftData's `SchemaMigrationPlan`).
///
/// ``StoreMigration/migrate(path:plan:options:)`` finds the version the store was written with and runs every later
/// stage in one pass over the log: v1 → v2 → v3 writes one new log.
public struct MigrationPlan: Sendable {
    /// The oldest version.
    public let firstModel: ObjectModel
    /// The stages, each from the previous version to its ``MigrationStage/targetModel``.
    public let stages: [MigrationStage]

    /// A plan from `firstModel` through `stages`.
    public init(from firstModel: ObjectModel, stages: [MigrationStage]) {
        self.firstModel = firstModel
        self.stages = stages
    }

    /// Every version, oldest first.
    var models: [ObjectModel] { [firstModel] + stages.map(\.targetModel) }
}
