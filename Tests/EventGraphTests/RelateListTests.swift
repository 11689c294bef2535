import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// A relate edits a to-many list in place (`StoreState.relate`): removals first, then each added target not in the
/// list yet, in order. Its shortcuts (new keys compared with the list's largest, keys that increase appended without
/// a set) must give the list the plain definition gives, and a key bound at least the list's largest key.
@Suite("A relate's list edit agrees with its plain definition")
struct RelateListTests {
    /// The plain definition: drop every removed identity, then append each added one not present.
    static func expected(_ targets: [ObjectReference], added: [ObjectReference], removed: [ObjectReference])
        -> [ObjectReference]
    {
        let gone = Set(removed.map(\.identity))
        var result = targets.filter { !gone.contains($0.identity) }
        var present = Set(result.map(\.identity))
        for target in added where present.insert(target.identity).inserted { result.append(target) }
        return result
    }

    @Test("random lists and relates: many new keys in order, out of order, repeated, old keys, other stores")
    func randomRelates() {
        let seed = TestSeed.make()
        var generator = SeededGenerator(seed: seed)
        func below(_ bound: Int) -> Int { Int(generator.next() % UInt64(bound)) }
        func reference(_ key: UInt64) -> ObjectReference {
            // A few references to another store's objects, which may share a key with one of this store's.
            ObjectReference(storeIndex: below(8) == 0 ? 1 : 0, entityIndex: 2, key: key)
        }
        for round in 0..<3_000 {
            var list: [ObjectReference] = []
            var seen = Set<ObjectIdentity>()
            for _ in 0..<below(60) {
                let target = reference(UInt64(1 + below(500)))
                if seen.insert(target.identity).inserted { list.append(target) }
            }
            let largest = list.map(\.key).max() ?? 0
            let count = below(4) == 0 ? below(8) : 17 + below(150)
            var added: [ObjectReference]
            switch round % 5 {
            case 0:
                // New objects in key order (a transaction's inserts related to one object): the shortcut.
                var key = largest
                added = (0..<count).map { _ in
                    key += UInt64(1 + below(3))
                    return ObjectReference(entityIndex: 2, key: key)
                }
            case 1:
                // New keys, not in order, some repeated.
                added = (0..<count).map { _ in ObjectReference(entityIndex: 2, key: largest + 1 + UInt64(below(40))) }
            case 2:
                // New keys in order but one repeated at the end, or another store's object with the same key.
                added = (0..<count).map { ObjectReference(entityIndex: 2, key: largest + 1 + UInt64($0)) }
                if let last = added.last {
                    added.append(below(2) == 0 ? last : ObjectReference(storeIndex: 1, entityIndex: 2, key: last.key))
                }
            case 3:
                // Keys in order that start inside the list (some already present).
                let start = UInt64(below(Int(largest) + 1))
                added = (0..<count).map { ObjectReference(entityIndex: 2, key: start + UInt64($0)) }
            default:
                added = (0..<count).map { _ in reference(UInt64(1 + below(700))) }
            }
            let removed = (0..<below(7)).map { _ in reference(UInt64(1 + below(500))) }
            var edited = list
            let passBound = below(2) == 0
            let bound = StoreState.relate(&edited, added: added, removed: removed, keyBound: passBound ? largest : nil)
            let wanted = Self.expected(list, added: added, removed: removed)
            #expect(edited == wanted, "seed \(seed), round \(round)")
            if let bound, let largestKey = edited.map(\.key).max() {
                #expect(bound >= largestKey, "seed \(seed), round \(round)")
            }
        }
    }
}
