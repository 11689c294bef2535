import Foundation
import TestSupport
import Testing

@testable import EventGraph

@Suite("An entity's key directory finds every slot without Hasher")
struct KeyDirectoryTests {
    @Test("a key above every key set is absent without a probe; removals and removeAll keep lookups right")
    func keysAboveTheLargest() {
        var directory = KeyDirectory()
        #expect(directory[0] == nil)
        for key in 1...5_000 as ClosedRange<UInt64> { directory.set(Int(key) * 2, for: key) }
        #expect(directory[5_001] == nil)
        #expect(directory[.max] == nil)
        #expect(directory[5_000] == 10_000)
        directory.remove(5_000)
        #expect(directory[5_000] == nil)
        #expect(directory[4_999] == 9_998)
        directory.set(7, for: 9_000)
        #expect(directory[9_000] == 7)
        directory.removeAll()
        #expect(directory[9_000] == nil && directory[1] == nil)
        directory.set(3, for: 0)
        #expect(directory[0] == 3)
    }

    @Test("random sets, replacements and removals agree with a dictionary, sequential and scattered keys")
    func agreesWithDictionary() {
        let seed = TestSeed.make()
        var generator = SeededGenerator(seed: seed)
        var directory = KeyDirectory()
        var reference: [UInt64: Int] = [:]
        for step in 0..<60_000 {
            // Dense keys (as saves make them) first, then keys that share the low bits that pick a shard, then any.
            let key: UInt64 =
                switch step / 20_000 {
                case 0: generator.next() % 5_000
                case 1: (generator.next() % 2_000) << 8 | 7
                default: generator.next()
                }
            switch generator.next() % 10 {
            case 0..<6:
                let slot = Int(generator.next() % 1_000_000)
                directory.set(slot, for: key)
                reference[key] = slot
            case 6..<9:
                #expect(directory.remove(key) == reference.removeValue(forKey: key), "step \(step), seed \(seed)")
            default:
                #expect(directory[key] == reference[key], "step \(step), seed \(seed)")
            }
            #expect(directory.count == reference.count, "step \(step), seed \(seed)")
            if step % 10_000 == 9_999 {
                for (key, slot) in reference { #expect(directory[key] == slot, "seed \(seed)") }
            }
        }
        for (key, slot) in reference { #expect(directory[key] == slot, "seed \(seed)") }
        #expect(directory[UInt64.max] == reference[UInt64.max])
        directory.removeAll()
        #expect(directory.count == 0 && directory[reference.keys.first ?? 0] == nil)
    }

    /// Keys a crafted file could hold: all in shard 0 and the first of their group of 16, with hashes just below
    /// 2^64 whose top 16 bits, which pick the home place in a shard of up to 65,536 places, are all ones.
    ///
    /// The directory hashes `key >> 12` times 2^64 / φ (rounded); a Fibonacci number times it lands a little below a
    /// multiple of 2^64, so the multiples of that number do too, by a little more each.
    static func pilingKeys(count: Int) -> [UInt64] {
        let golden: UInt64 = 0x9E37_79B9_7F4A_7C15
        var (previous, step): (UInt64, UInt64) = (1, 2)
        while 0 &- step &* golden >= 1 << 34 { (previous, step) = (step, previous + step) }
        precondition(UInt64(count) * (0 &- step &* golden) < 1 << 48, "too many keys to share the top 16 bits")
        return (1...UInt64(count)).map { ($0 * step) << 12 }
    }

    @Test(
        "sequential keys take neighbouring places in their shards, 16 to a group, so a replay's inserts walk memory in order"
    )
    func sequentialKeysAreNeighbours() {
        var directory = KeyDirectory()
        // Keys above the pages' range, which go to the shards (as a store's keys past 2^26 do).
        let base = UInt64(KeyDirectory.maximumPageCount * KeyDirectory.pageKeyCount)
        let keys = base + 1...base + 200_000 as ClosedRange<UInt64>
        for key in keys.prefix(1) { directory.set(Int(key - base), for: key) }
        directory.reserveCapacity(adding: keys.count)
        for key in keys { directory.set(Int(key - base), for: key) }
        #expect(directory.pageStatistics.pagedCount == 0)
        // A shard holds every 256th key: `key` and `key + 256` are neighbours in one shard's table when they are in
        // one group of 16 (unless another group's run is in the way). Fibonacci hashing of each key alone spread
        // them (about 1 in 1,000 neighbours).
        var pairs = 0
        var neighbours = 0
        for key in keys where key + 256 <= keys.upperBound {
            let place = directory.placeForTests(of: key)!
            let next = directory.placeForTests(of: key + 256)!
            #expect(place.shard == next.shard)
            pairs += 1
            if next.place == (place.place + 1) % place.capacity { neighbours += 1 }
        }
        #expect(neighbours * 10 >= pairs * 8, "\(neighbours) of \(pairs) keys sit next to the one 256 before")
        #expect(!directory.probeStatistics.isSeeded)
        for key in keys { #expect(directory[key] == Int(key - base)) }
    }

    @Test("keys crafted to share their home place do not pile up: the shard takes a seed and spreads them")
    func craftedKeysDoNotPileUp() {
        let keys = Self.pilingKeys(count: 20_000)
        var directory = KeyDirectory()
        for (slot, key) in keys.enumerated() { directory.set(slot, for: key) }
        let statistics = directory.probeStatistics
        // Before the seed, every one of these keys had the same home: the last walked 19,999 places.
        #expect(statistics.isSeeded)
        #expect(statistics.longestProbe <= ProbingTableLimit.longestAllowedProbe)
        for (slot, key) in keys.enumerated() { #expect(directory[key] == slot) }
        for key in keys.prefix(10_000) { directory.remove(key) }
        #expect(directory.count == 10_000)
        for (slot, key) in keys.enumerated() { #expect(directory[key] == (slot < 10_000 ? nil : slot)) }
        for (slot, key) in keys.prefix(5_000).enumerated() { directory.set(slot, for: key) }
        for (slot, key) in keys.prefix(5_000).enumerated() { #expect(directory[key] == slot) }
        #expect(directory.probeStatistics.longestProbe <= ProbingTableLimit.longestAllowedProbe)
    }

    @Test("dense keys, as saves make them, go to pages of 4 bytes a key and never to the hashed shards")
    func denseKeysGoToPages() {
        var directory = KeyDirectory()
        // An entity's keys after other entities' (a store numbers all its objects from one counter).
        let keys = 1_100..<201_100 as Range<UInt64>
        directory.reserveCapacity(adding: keys.count)
        for key in keys { directory.set(Int(key - 1_100), for: key) }
        let pages = directory.pageStatistics
        #expect(pages.pagedCount == keys.count)
        #expect(pages.pageCount == (keys.count + 1_100 + KeyDirectory.pageKeyCount - 1) / KeyDirectory.pageKeyCount)
        #expect(directory.placeForTests(of: 5_000) == nil && directory.probeStatistics.longestProbe == 0)
        for key in stride(from: 1_100, to: 201_100 as UInt64, by: 7) { #expect(directory[key] == Int(key - 1_100)) }
        #expect(directory[1_099] == nil && directory[201_100] == nil)
    }

    @Test("an entity with one key in twenty takes pages only while they are a quarter full; its other keys are hashed")
    func sparseKeysGoToShards() {
        var directory = KeyDirectory()
        let keys = stride(from: 0, to: 400_000 as UInt64, by: 20).map { $0 }
        for (slot, key) in keys.enumerated() { directory.set(slot, for: key) }
        let pages = directory.pageStatistics
        // The first page is always taken; a second would make the pages less than a quarter full.
        #expect(pages.pageCount == 1)
        #expect(pages.pagedCount == KeyDirectory.pageKeyCount / 20 + 1)
        #expect(directory.count == keys.count)
        #expect(directory.placeForTests(of: keys.last!) != nil)
        for (slot, key) in keys.enumerated() { #expect(directory[key] == slot) }
        #expect(directory[21] == nil && directory[399_999] == nil)
        // A key the shards hold stays there when it is set again, and leaves with a removal.
        directory.set(7, for: keys.last!)
        #expect(directory[keys.last!] == 7 && directory.count == keys.count)
        #expect(directory.remove(keys.last!) == 7 && directory[keys.last!] == nil)
        #expect(directory.remove(0) == 0 && directory.count == keys.count - 2)
    }

    @Test("keys past the pages' range, as a crafted file may hold, are hashed: the array of pages stays bounded")
    func largeKeysAreHashed() {
        var directory = KeyDirectory()
        let limit = UInt64(KeyDirectory.maximumPageCount * KeyDirectory.pageKeyCount)
        directory.set(1, for: limit)
        directory.set(2, for: .max - 1)
        directory.set(3, for: limit - 1)
        #expect(directory.pageStatistics.pagedCount == 1 && directory.pageStatistics.pageCount == 1)
        #expect(directory[limit] == 1 && directory[.max - 1] == 2 && directory[limit - 1] == 3)
        #expect(directory.count == 3)
    }

    @Test("a copy keeps its slots while the original is changed (a reader's version of the entity)")
    func copiesAreIndependent() {
        var directory = KeyDirectory()
        directory.reserveCapacity(adding: 10_000)
        for key in 0..<10_000 as Range<UInt64> { directory.set(Int(key) * 2, for: key) }
        let held = directory
        for key in stride(from: 0, to: 10_000 as UInt64, by: 3) { directory.remove(key) }
        for key in 10_000..<12_000 as Range<UInt64> { directory.set(Int(key), for: key) }
        directory.set(1, for: 1)
        #expect(held.count == 10_000)
        for key in 0..<10_000 as Range<UInt64> { #expect(held[key] == Int(key) * 2) }
        #expect(held[10_500] == nil)
        #expect(directory[0] == nil && directory[1] == 1 && directory[2] == 4 && directory[11_999] == 11_999)
    }

    @Test("asking for a key's place (a lookup by ID's prefetch) is harmless for any key, paged, hashed or absent")
    func prefetchIsHarmless() {
        var directory = KeyDirectory()
        for key in [UInt64]([0, 1, 100_000]) { directory.prefetch(key) }
        for key in 1...10 as ClosedRange<UInt64> { directory.set(Int(key), for: key) }
        directory.set(11, for: 1 << 40)
        directory.remove(4)
        for key in [UInt64]([0, 1, 4, 10, 11, 5_000, 1 << 40, (1 << 40) + 1, .max]) { directory.prefetch(key) }
        #expect(directory[1] == 1 && directory[4] == nil && directory[1 << 40] == 11 && directory.count == 10)
    }

    @Test("a key of zero and the largest key are keys like any other")
    func extremeKeys() {
        var directory = KeyDirectory()
        directory.set(0, for: 0)
        directory.set(5, for: .max)
        #expect(directory[0] == 0 && directory[.max] == 5 && directory.count == 2)
        #expect(directory.remove(0) == 0 && directory[0] == nil && directory[.max] == 5)
    }
}

@Suite("Attribute options are kept whatever their number")
struct AttributeOptionListTests {
    final class Optioned: ManagedObject {
        @Attribute var plain: Int64 = 0
        @Attribute(.unique) var single: Int64 = 0
        @Attribute(.indexed, .length(1...)) var several: String = "x"
        @Attribute var optional: String?
        @Attribute(.indexed) var optionalSingle: Date?
        @Attribute(.indexed, .originalName("older")) var optionalSeveral: Double?
    }

    @Test("no, one and several options reach the model, for required and optional attributes")
    func optionsReachTheModel() throws {
        let model = try ObjectModel(types: [Optioned.self])
        let entity = try #require(model.entity(for: Optioned.self))
        func attribute(_ name: String) throws -> AttributeDescription {
            try #require(entity.attribute(named: name))
        }
        #expect(try !attribute("plain").isUnique && !attribute("plain").isIndexed)
        #expect(try attribute("single").isUnique)
        #expect(try attribute("several").isIndexed && attribute("several").minimumLength == 1)
        #expect(try attribute("optional").isOptional && !attribute("optional").isIndexed)
        #expect(try attribute("optionalSingle").isOptional && attribute("optionalSingle").isIndexed)
        #expect(try attribute("optionalSeveral").isIndexed && attribute("optionalSeveral").originalName == "older")
    }
}
