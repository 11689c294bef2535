/// The objects of one context by identity: at most one object per identity (uniquing).
///
/// A fetch looks up, and usually registers, every object it returns, so this table is on the read path of every
/// fetched object: a ``ProbingTable`` (open addressing, Fibonacci hashing of the identity, no `Hasher`).
struct ObjectRegistry {
    fileprivate struct Entry: ProbingTableEntry {
        var key: ObjectIdentity
        /// `nil` for an empty place.
        var object: ManagedObject?

        static var empty: Entry { Entry(key: ObjectIdentity(storeIndex: 0, key: 0), object: nil) }

        var isEmpty: Bool { object == nil }

        /// A store numbers its objects 1, 2, 3 ... and a fetch registers them in that order: 16 sequential keys
        /// share a hash and take neighbouring places, so registering and looking them up walks memory in order
        /// instead of missing the cache once per object.
        static var groupsSequentialKeys: Bool { true }

        @inline(__always)
        static func placeInGroup(_ identity: ObjectIdentity) -> Int { Int(truncatingIfNeeded: identity.key & 15) }

        @inline(__always)
        static func hash(_ identity: ObjectIdentity) -> UInt64 {
            (identity.key >> 4 &+ UInt64(identity.storeIndex) &* 0xC2B2_AE3D_27D4_EB4F) &* 0x9E37_79B9_7F4A_7C15
        }
    }

    private var table = ProbingTable<Entry>()
    /// Objects that another object replaced under their identity (a save or a parent's save renaming an inserted
    /// object to an identity a fault already had): they still belong to the context (their unowned reference to
    /// it, see ``ManagedObject/contextStorage``), so the registry keeps them until the context leaves them too.
    private(set) var displaced: [ManagedObject] = []

    /// The number of registered objects.
    var count: Int { table.count }

    var isEmpty: Bool { table.count == 0 }

    /// Whether the table places its objects by a seeded mix (keys piled up; for tests).
    var isSeeded: Bool { table.isSeeded }

    /// Every registered object, in no particular order (a copy: callers may change the registry while they go
    /// through it).
    var values: [ManagedObject] {
        var objects: [ManagedObject] = []
        objects.reserveCapacity(count)
        table.forEach { objects.append($0.object!) }
        return objects
    }

    /// Removes every object in one pass over the table, calling `body` first with each one that is also referenced
    /// from outside the registry (the others go away with it): a context's teardown.
    ///
    /// The objects are checked a batch at a time before any of the batch is released (see
    /// ``ProbingTable/removeAll(examining:calling:)``): each check is a cache miss once the objects were last touched
    /// long ago (a fetch of 100,000 objects), and the checks of a batch overlap where a check and a release in turn
    /// waited for each miss. A release may free an object that held another (a fetched property's cached result), so
    /// an object found shared may be unique when it is called for: detaching an object that goes away is harmless.
    mutating func removeAll(callingForShared body: (ManagedObject) -> Void) {
        table.removeAll(
            examining: { entry in !isKnownUniquelyReferenced(&entry.object) },
            calling: { entry, isShared in if isShared { body(entry.object!) } })
        for index in displaced.indices where !isKnownUniquelyReferenced(&displaced[index]) { body(displaced[index]) }
        displaced = []
    }

    /// The place of an identity's object in the table, for tests.
    func placeForTests(of identity: ObjectIdentity) -> Int? { table.placeForTests(of: identity) }

    /// The number of places in the table, for tests.
    var capacityForTests: Int { table.capacity }

    /// The object registered for an identity; setting `nil` removes it.
    subscript(identity: ObjectIdentity) -> ManagedObject? {
        @inline(__always)
        get { table[identity]?.object }
        set {
            if let newValue {
                updateValue(newValue, forKey: identity)
            } else {
                removeValue(forKey: identity)
            }
        }
    }

    /// Registers `object` for `identity`; returns the object it replaces, if any.
    @discardableResult
    mutating func updateValue(_ object: ManagedObject, forKey identity: ObjectIdentity) -> ManagedObject? {
        let replaced = table.update(Entry(key: identity, object: object))?.object
        if let replaced, replaced !== object, replaced.contextStorage != nil { displaced.append(replaced) }
        return replaced
    }

    /// Registers a new object for an identity that has none (a fault a fetch makes for a row, after a lookup found
    /// none): the reference is taken into the table, not copied (as ``updateValue(_:forKey:)`` would otherwise).
    @inline(__always)
    mutating func insertNew(_ object: consuming ManagedObject, forKey identity: ObjectIdentity) {
        guard let replaced = table.update(Entry(key: identity, object: object))?.object else { return }
        assertionFailure("\(identity) was registered already")
        if replaced.contextStorage != nil { displaced.append(replaced) }
    }

    /// Removes the object of `identity`; returns it, if there was one.
    @discardableResult
    mutating func removeValue(forKey identity: ObjectIdentity) -> ManagedObject? {
        table.remove(identity)?.object
    }

    /// Removes every object, the displaced ones included; the table keeps its capacity.
    mutating func removeAll() {
        table.removeAll()
        displaced = []
    }

    /// Makes room for `capacity` objects in all without growing.
    mutating func reserveCapacity(_ capacity: Int) { table.reserveCapacity(capacity) }
}
