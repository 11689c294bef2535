/// The objects of one context by identity: at most one object per identity (uniquing).
///
/// A fetch looks up, and usually registers, every object it returns, so this table is on the read path of every
/// fetched object. It is an open-addressing table with linear probing and Fibonacci hashing of the identity (keys
/// are dense and mostly sequential, which that spreads evenly), kept at most half full; a removal shifts the
/// entries after it back instead of leaving a tombstone. Against a `Dictionary` it saves the two `Hasher` runs
/// (seeding, SipHash finalization) of each lookup and insert.
struct ObjectRegistry {
    private struct Entry {
        var identity: ObjectIdentity
        /// `nil` for an empty place.
        var object: ManagedObject?
    }

    private var entries: [Entry] = []
    /// `entries.count - 1` (the capacity is a power of two), or 0 while nothing was ever stored.
    private var mask = 0
    /// How far to shift the 64-bit hash so that its top bits index the table.
    private var shift: UInt64 = 63
    /// The number of registered objects.
    private(set) var count = 0

    /// The smallest table made.
    private static let minimumCapacity = 16

    var isEmpty: Bool { count == 0 }

    /// Every registered object, in no particular order (a copy: callers may change the registry while they go
    /// through it).
    var values: [ManagedObject] {
        var objects: [ManagedObject] = []
        objects.reserveCapacity(count)
        for entry in entries { if let object = entry.object { objects.append(object) } }
        return objects
    }

    /// Calls `body` with every registered object that is also referenced from outside the registry (the others
    /// go away with it).
    mutating func forEachSharedObject(_ body: (ManagedObject) -> Void) {
        guard count > 0 else { return }
        for index in entries.indices where entries[index].object != nil {
            if !isKnownUniquelyReferenced(&entries[index].object) { body(entries[index].object!) }
        }
    }

    @inline(__always)
    private func home(of identity: ObjectIdentity) -> Int {
        let mixed = (identity.key &+ UInt64(identity.storeIndex) &* 0xC2B2_AE3D_27D4_EB4F) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed >> shift)
    }

    /// The place of `identity`, or of the empty place where it would go.
    @inline(__always)
    private func place(of identity: ObjectIdentity) -> Int {
        var index = home(of: identity)
        while let _ = entries[index].object {
            if entries[index].identity == identity { return index }
            index = (index + 1) & mask
        }
        return index
    }

    /// The object registered for an identity; setting `nil` removes it.
    subscript(identity: ObjectIdentity) -> ManagedObject? {
        @inline(__always)
        get {
            guard count > 0 else { return nil }
            return entries[place(of: identity)].object
        }
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
        if (count + 1) * 2 > entries.count { grow(toHold: count + 1) }
        let index = place(of: identity)
        let previous = entries[index].object
        entries[index] = Entry(identity: identity, object: object)
        if previous == nil { count += 1 }
        return previous
    }

    /// Removes the object of `identity`; returns it, if there was one.
    @discardableResult
    mutating func removeValue(forKey identity: ObjectIdentity) -> ManagedObject? {
        guard count > 0 else { return nil }
        var hole = place(of: identity)
        guard let removed = entries[hole].object else { return nil }
        entries[hole].object = nil
        count -= 1
        // Shift back each following entry of the run whose home is not between the hole and its place (cyclically),
        // so that every entry stays reachable from its home without tombstones.
        var index = (hole + 1) & mask
        while let _ = entries[index].object {
            let home = home(of: entries[index].identity)
            let stays = hole <= index ? (hole < home && home <= index) : (hole < home || home <= index)
            if !stays {
                entries[hole] = entries[index]
                entries[index].object = nil
                hole = index
            }
            index = (index + 1) & mask
        }
        return removed
    }

    /// Removes every object; the table keeps its capacity.
    mutating func removeAll() {
        guard count > 0 else { return }
        for index in entries.indices { entries[index].object = nil }
        count = 0
    }

    /// Makes room for `capacity` objects in all without growing.
    mutating func reserveCapacity(_ capacity: Int) {
        if capacity * 2 > entries.count { grow(toHold: capacity) }
    }

    /// Rebuilds the table with room for at least `needed` objects at most half full.
    private mutating func grow(toHold needed: Int) {
        var capacity = Swift.max(Self.minimumCapacity, entries.count)
        while capacity < needed * 2 { capacity *= 2 }
        let old = entries
        entries = Array(repeating: Entry(identity: ObjectIdentity(storeIndex: 0, key: 0), object: nil), count: capacity)
        mask = capacity - 1
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        for entry in old {
            guard let object = entry.object else { continue }
            entries[place(of: entry.identity)] = Entry(identity: entry.identity, object: object)
        }
    }
}
