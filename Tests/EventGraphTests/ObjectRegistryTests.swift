import Foundation
import TestSupport
import Testing

@testable import EventGraph

@Suite("A context's registry keeps one object per identity")
struct ObjectRegistryTests {
    @Test("random inserts, replacements and removals agree with a dictionary, in several stores")
    func agreesWithDictionary() {
        let seed = TestSeed.make()
        var generator = SeededGenerator(seed: seed)
        var registry = ObjectRegistry()
        var reference: [ObjectIdentity: ManagedObject] = [:]
        for step in 0..<40_000 {
            // Few stores and a key range that makes long probe runs and many removals inside them.
            let identity = ObjectIdentity(
                storeIndex: UInt32(generator.next() % 3), key: generator.next() % 3_000 + (step < 20_000 ? 0 : 1 << 40))
            switch generator.next() % 10 {
            case 0..<5:
                let object = ManagedObject()
                #expect(
                    registry.updateValue(object, forKey: identity) === reference.updateValue(object, forKey: identity))
            case 5..<8:
                #expect(registry.removeValue(forKey: identity) === reference.removeValue(forKey: identity))
            case 8:
                registry[identity] = nil
                reference[identity] = nil
            default:
                #expect(registry[identity] === reference[identity], "step \(step), seed \(seed)")
            }
            #expect(registry.count == reference.count)
            if step % 5_000 == 0 {
                for (identity, object) in reference { #expect(registry[identity] === object, "seed \(seed)") }
            }
        }
        for (identity, object) in reference { #expect(registry[identity] === object, "seed \(seed)") }
        #expect(Set(registry.values.map(ObjectIdentifier.init)) == Set(reference.values.map(ObjectIdentifier.init)))
        registry.removeAll()
        #expect(registry.isEmpty && registry.values.isEmpty)
        #expect(registry[ObjectIdentity(storeIndex: 0, key: 1)] == nil)
    }

    @Test("a reserved registry grows past its reservation and finds every object")
    func growsPastReservation() {
        var registry = ObjectRegistry()
        registry.reserveCapacity(100)
        let objects = (0..<1_000).map { _ in ManagedObject() }
        for (key, object) in objects.enumerated() {
            registry[ObjectIdentity(storeIndex: 0, key: UInt64(key))] = object
        }
        #expect(registry.count == 1_000)
        for (key, object) in objects.enumerated() {
            #expect(registry[ObjectIdentity(storeIndex: 0, key: UInt64(key))] === object)
            #expect(registry[ObjectIdentity(storeIndex: 1, key: UInt64(key))] == nil)
        }
    }

    @Test("growing moves the objects: each is released once when the registry goes, and a copy keeps its own")
    func growthMovesObjects() {
        weak var firstObject: ManagedObject?
        weak var lastObject: ManagedObject?
        var copy = ObjectRegistry()
        do {
            var registry = ObjectRegistry()
            for key in 0..<5_000 {
                let object = ManagedObject()
                if key == 0 { firstObject = object }
                if key == 4_999 { lastObject = object }
                registry[ObjectIdentity(storeIndex: 0, key: UInt64(key))] = object
                // A copy taken midway shares the table's entries until the original grows past it.
                if key == 1_000 { copy = registry }
            }
            #expect(registry.count == 5_000 && copy.count == 1_001)
            #expect(registry[ObjectIdentity(storeIndex: 0, key: 0)] === copy[ObjectIdentity(storeIndex: 0, key: 0)])
            // Held by the registry (and the copy, for the first 1,001) alone: no growth left a reference behind.
            var shared = 0
            registry.removeAll(callingForShared: { _ in shared += 1 })
            #expect(shared == 1_001)
        }
        #expect(lastObject == nil)
        #expect(firstObject != nil)
        for key in 0...1_000 { #expect(copy[ObjectIdentity(storeIndex: 0, key: UInt64(key))] != nil) }
        copy.removeAll()
        #expect(firstObject == nil)
    }

    @Test("taking a seed moves the objects: the registry still finds each, and each is released once when it goes")
    func seedingMovesObjects() {
        // Keys whose groups (key / 16) all have the same home: the registry takes a seed while they are registered.
        let keys = KeyDirectoryTests.pilingKeys(count: 4_000).map { $0 >> 8 }
        weak var firstObject: ManagedObject?
        do {
            var registry = ObjectRegistry()
            for key in keys {
                let object = ManagedObject()
                if key == keys[0] { firstObject = object }
                registry[ObjectIdentity(storeIndex: 0, key: key)] = object
            }
            #expect(registry.isSeeded)
            #expect(registry.count == keys.count)
            #expect(keys.allSatisfy { registry[ObjectIdentity(storeIndex: 0, key: $0)] != nil })
            #expect(registry[ObjectIdentity(storeIndex: 0, key: keys[0])] === firstObject)
            // Held by the registry alone: seeding left no reference behind.
            var shared = 0
            registry.removeAll(callingForShared: { _ in shared += 1 })
            #expect(shared == 0)
        }
        #expect(firstObject == nil)
    }

    @Test("fetches, filtered fetches and lookups by ID hand out one object per ID in a context")
    func uniquingAcrossReadPaths() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.samples)
        let writer = container.newBackgroundContext()
        for index in 0..<3_000 {
            let sample = Sample()
            writer.insert(sample)
            sample.int64 = Int64(index)
            sample.string = "sample \(index)"
        }
        try writer.save()
        let context = container.newBackgroundContext()
        let ids = try container.newBackgroundContext().fetch(FetchDescriptor<Sample>()).map(\.objectID)
        // Half by ID first, then a fetch of all, then every ID again.
        let early = ids.prefix(1_500).map { context.object(with: $0) }
        let fetched = try context.fetch(FetchDescriptor<Sample>())
        #expect(fetched.count == 3_000)
        for (index, object) in early.enumerated() { #expect(object === fetched[index]) }
        for (index, id) in ids.enumerated() { #expect(context.object(with: id) === fetched[index]) }
        let filtered = try context.fetch(FetchDescriptor<Sample>(filter: .compare("int64", .less, .int64(10))))
        #expect(filtered.allSatisfy { object in object === fetched[Int(object.int64)] })
        #expect(context.registeredObjects.count == 3_000)
        // Deleting and saving takes the objects out; the others stay unique.
        for object in fetched.prefix(1_000) { context.delete(object) }
        try context.save()
        #expect(context.registeredObjects.count == 2_000)
        let again = try context.fetch(FetchDescriptor<Sample>())
        #expect(again.count == 2_000)
        for (index, object) in again.enumerated() { #expect(object === fetched[1_000 + index]) }
        try container.close()
    }

    @Test("sequential keys take neighbouring places, 16 to a group, so a fetch's registrations walk memory in order")
    func consecutiveKeysAreNeighbours() {
        var registry = ObjectRegistry()
        registry.reserveCapacity(1_000)
        let objects = (0..<1_000).map { _ in ManagedObject() }
        for (index, object) in objects.enumerated() {
            registry[ObjectIdentity(storeIndex: 0, key: UInt64(index + 1))] = object
        }
        let capacity = registry.capacityForTests
        var neighbours = 0
        for key in 1..<1_000 {
            let place = registry.placeForTests(of: ObjectIdentity(storeIndex: 0, key: UInt64(key)))!
            let next = registry.placeForTests(of: ObjectIdentity(storeIndex: 0, key: UInt64(key + 1)))!
            if next == (place + 1) % capacity { neighbours += 1 }
        }
        // Within a group of 16 the places follow each other (unless another group's run is in the way); Fibonacci
        // hashing of each key alone spread them (about 1 in 2,048 neighbours).
        #expect(neighbours >= 800, "\(neighbours) of 999 sequential keys sit next to the one before")
        for (index, object) in objects.enumerated() {
            #expect(registry[ObjectIdentity(storeIndex: 0, key: UInt64(index + 1))] === object)
        }
    }

    @Test("tearing a registry down calls back for the objects referenced elsewhere only, and empties it")
    func teardownCallsForSharedObjects() {
        var registry = ObjectRegistry()
        var kept: [ManagedObject] = []
        for key in 0..<100 {
            let object = ManagedObject()
            if key % 3 == 0 { kept.append(object) }
            registry[ObjectIdentity(storeIndex: 0, key: UInt64(key))] = object
        }
        var called: [ObjectIdentifier] = []
        registry.removeAll(callingForShared: { called.append(ObjectIdentifier($0)) })
        #expect(Set(called) == Set(kept.map(ObjectIdentifier.init)))
        #expect(called.count == kept.count)
        #expect(registry.isEmpty && registry.values.isEmpty)
        #expect(registry[ObjectIdentity(storeIndex: 0, key: 0)] == nil)
    }
}
