import LogFormat

/// Which object a context means: the store that holds it and the object's key there.
///
/// Keys are unique only within a store (every store numbers its objects from the same start), so a context keys its
/// objects by both. The store is named by its index in the table of the ``ObjectStore`` under the context
/// (``ObjectStore/storeUUIDs``), the numbering that references from that object store use too
/// (``ObjectReference/storeIndex``). The entity is not part of the identity: an ``ObjectID`` may name a super-entity
/// of the object's own.
struct ObjectIdentity: Hashable, Sendable, CustomStringConvertible {
    /// The store's index in the object store's table (``ObjectStore/storeUUIDs``).
    var storeIndex: UInt32
    /// The object's key in that store.
    var key: UInt64

    init(storeIndex: UInt32, key: UInt64) {
        self.storeIndex = storeIndex
        self.key = key
    }

    /// Hashes one word: a context looks an identity up for every committed row a fetch examines, and keys differ far
    /// more often than stores do.
    func hash(into hasher: inout Hasher) {
        hasher.combine(key &+ UInt64(storeIndex) &* 0x9E37_79B9_7F4A_7C15)
    }

    var description: String { "store \(storeIndex), key \(key)" }
}

extension ObjectReference {
    /// The identity of the referenced object (the entity aside).
    var identity: ObjectIdentity { ObjectIdentity(storeIndex: storeIndex, key: key) }

    /// A reference to the object with `identity`, whose entity has `entityIndex` in the model.
    init(_ identity: ObjectIdentity, entityIndex: Int) {
        self.init(storeIndex: identity.storeIndex, entityIndex: UInt32(entityIndex), key: identity.key)
    }
}

extension Row {
    /// The identity of this row's object when the row comes from the store at `storeIndex`.
    func identity(inStore storeIndex: UInt32) -> ObjectIdentity {
        ObjectIdentity(storeIndex: storeIndex, key: key)
    }
}
