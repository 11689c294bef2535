import LogFormat

/// The committed values of one object: immutable, replaced whole by each transaction that changes the object.
///
/// Objects keep a reference to the row they fired from; its ``version`` (the transaction that last changed the
/// object) is what optimistic conflict detection compares at save.
final class Row: Sendable {
    let entityIndex: Int
    let key: UInt64
    /// The transaction that last changed the object.
    let version: UInt64
    /// One value per property of the entity (transient attributes hold `.null`).
    let values: [PropertyValue]

    init(entityIndex: Int, key: UInt64, version: UInt64, values: [PropertyValue]) {
        self.entityIndex = entityIndex
        self.key = key
        self.version = version
        self.values = values
    }

    var reference: ObjectReference {
        ObjectReference(entityIndex: UInt32(entityIndex), key: key)
    }
}

extension PropertyValue {
    /// The targets of a relationship value.
    var references: [ObjectReference] {
        switch self {
        case .attribute: []
        case .toOne(let reference): reference.map { [$0] } ?? []
        case .toMany(let references): references
        }
    }
}
