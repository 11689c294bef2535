/// A reference to an object by its permanent identity: store, entity and key.
///
/// `storeIndex` 0 is the store whose log holds the payload; `k > 0` is `foreignStores[k - 1]` of the enclosing
/// ``Changeset`` or checkpoint (cross-store references). `entityIndex` indexes the entities of the schema
/// in force in this log (a relationship's destination entity is always part of the referencing store's model).
public struct ObjectReference: Hashable, Sendable, Comparable {
    /// 0 for the store holding the payload; k for the k-th foreign store.
    public var storeIndex: UInt32
    /// The entity's index in the schema in force.
    public var entityIndex: UInt32
    /// The object's key, unique in its store and never reused.
    public var key: UInt64

    /// Creates a reference.
    public init(storeIndex: UInt32 = 0, entityIndex: UInt32, key: UInt64) {
        self.storeIndex = storeIndex
        self.entityIndex = entityIndex
        self.key = key
    }

    public static func < (lhs: ObjectReference, rhs: ObjectReference) -> Bool {
        (lhs.storeIndex, lhs.entityIndex, lhs.key) < (rhs.storeIndex, rhs.entityIndex, rhs.key)
    }
}

/// The value of one property in an insert or update: an attribute value or a relationship's target(s).
public enum PropertyValue: Hashable, Sendable {
    case attribute(AttributeValue)
    /// A to-one relationship; `nil` clears it.
    case toOne(ObjectReference?)
    /// The complete contents of a to-many relationship (in order when the relationship is ordered).
    case toMany([ObjectReference])
}

/// One property of an object, by its index in the entity's property list (in the schema the log records).
public struct PropertyChange: Hashable, Sendable {
    /// The property's index in the entity's property list (in the schema the log records).
    public var propertyIndex: UInt32
    /// The new value.
    public var value: PropertyValue

    /// Creates a property change.
    public init(propertyIndex: UInt32, value: PropertyValue) {
        self.propertyIndex = propertyIndex
        self.value = value
    }
}

/// One operation of a changeset.
public enum ChangeOperation: Hashable, Sendable {
    /// A new object with the given property values (properties not listed take their defaults).
    case insert(ObjectReference, [PropertyChange])
    /// Changed properties of an existing object (only those that changed).
    case update(ObjectReference, [PropertyChange])
    /// Targets added to and removed from a to-many relationship of an existing object.
    case relate(ObjectReference, propertyIndex: UInt32, added: [ObjectReference], removed: [ObjectReference])
    /// The object no longer exists.
    case delete(ObjectReference)
}

/// Everything one root-context save changed: the payload of a transaction.
public struct Changeset: Hashable, Sendable {
    /// Logical, monotonic, contiguous transaction number (1, 2, 3, …); compaction preserves it.
    public var transactionID: UInt64
    /// Commit time in microseconds since 1970-01-01T00:00:00Z.
    public var commitTimeMicroseconds: Int64
    /// Who saved: a context or author name; may be empty.
    public var author: String
    /// The next object key the store will allocate after this transaction (keys are never reused).
    public var nextKey: UInt64
    /// Stores referenced by ``ObjectReference/storeIndex`` values greater than 0.
    public var foreignStores: [LogUUID]
    /// The save's operations, in order.
    public var operations: [ChangeOperation]
    /// Named counters advanced by this transaction (payload version 3; empty in every other version).
    public var sequenceReservations: [SequenceReservation]
    /// The save across stores this changeset is one part of (payload version 2); `nil` for a save of one store.
    public var crossStore: CrossStoreTransaction?

    /// Creates a changeset.
    public init(
        transactionID: UInt64, commitTimeMicroseconds: Int64, author: String, nextKey: UInt64,
        foreignStores: [LogUUID] = [], operations: [ChangeOperation],
        sequenceReservations: [SequenceReservation] = [], crossStore: CrossStoreTransaction? = nil
    ) {
        self.sequenceReservations = sequenceReservations
        self.transactionID = transactionID
        self.commitTimeMicroseconds = commitTimeMicroseconds
        self.author = author
        self.nextKey = nextKey
        self.foreignStores = foreignStores
        self.operations = operations
        self.crossStore = crossStore
    }
}
