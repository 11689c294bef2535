/// Where each object of one entity is: key → slot (chunk × ``ColumnChunk/slotCapacity`` + position).
///
/// The map is split into ``shardCount`` tables by the key's low bits, so that a commit made while a reader holds an
/// older version copies only the shards of the keys it touches, not a map of every object. Each shard is a
/// ``ProbingTable`` (open addressing, Fibonacci hashing of the key's other bits, sequential keys grouped): a lookup by
/// ID runs no `Hasher`.
struct KeyDirectory: Sendable {
    static let shardCount = 256

    fileprivate struct Entry: ProbingTableEntry, Sendable {
        var key: UInt64
        /// The slot; -1 for an empty place.
        var slot: Int

        static var empty: Entry { Entry(key: 0, slot: -1) }

        var isEmpty: Bool { slot < 0 }

        /// A shard's keys differ in the bits above the shard's (the low 8): keys allocated in ascending order — a
        /// save's or a replayed transaction's inserts — come to a shard 256 apart, and 16 of those in a row (the
        /// same bits above the low 12) share a hash and take neighbouring places, so that inserting or looking up
        /// thousands of new keys touches each shard's table in a few runs instead of missing the cache once per key.
        static var groupsSequentialKeys: Bool { true }

        @inline(__always)
        static func placeInGroup(_ key: UInt64) -> Int { Int(truncatingIfNeeded: key >> 8 & 15) }

        @inline(__always)
        static func hash(_ key: UInt64) -> UInt64 { (key >> 12) &* 0x9E37_79B9_7F4A_7C15 }
    }

    private var shards = [ProbingTable<Entry>](repeating: ProbingTable(), count: shardCount)
    private(set) var count = 0
    /// A key no key in the map exceeds (the largest ever set; removals leave it): a lookup of a larger key — a new
    /// object's, keys being allocated in ascending order — answers without probing a shard (a cache miss in a map
    /// of a million keys, per replayed insert).
    private var keyBound: UInt64 = 0

    @inline(__always)
    private static func shard(of key: UInt64) -> Int { Int(truncatingIfNeeded: key & UInt64(shardCount - 1)) }

    subscript(key: UInt64) -> Int? {
        guard count > 0, key <= keyBound else { return nil }
        return shards[Self.shard(of: key)][key]?.slot
    }

    /// Starts loading the directory's place for `key` without waiting for it (see ``ProbingTable/prefetch(_:)``).
    @inline(__always)
    func prefetch(_ key: UInt64) {
        guard count > 0, key <= keyBound else { return }
        shards[Self.shard(of: key)].prefetch(key)
    }

    /// Records the slot of a key.
    mutating func set(_ slot: Int, for key: UInt64) {
        precondition(slot >= 0, "slot \(slot) of key \(key) is negative")
        if shards[Self.shard(of: key)].update(Entry(key: key, slot: slot)) == nil { count += 1 }
        if key > keyBound { keyBound = key }
    }

    /// Forgets a key; returns its slot.
    @discardableResult
    mutating func remove(_ key: UInt64) -> Int? {
        guard let entry = shards[Self.shard(of: key)].remove(key) else { return nil }
        count -= 1
        return entry.slot
    }

    /// Makes room for `additional` more keys.
    mutating func reserveCapacity(adding additional: Int) {
        let perShard = (count + additional) / Self.shardCount + 1
        for index in shards.indices where shards[index].capacity < perShard * 2 {
            shards[index].reserveCapacity(perShard * 5 / 4)
        }
    }

    /// The longest walk from a key's home to its place in any shard, and whether any shard took a seed because keys
    /// piled up (see ``ProbingTable``); for tests.
    var probeStatistics: (longestProbe: Int, isSeeded: Bool) {
        shards.reduce((0, false)) { ($0.0 < $1.longestProbe ? $1.longestProbe : $0.0, $0.1 || $1.isSeeded) }
    }

    /// The shard of a key and its entry's place in the shard's table, and that table's number of places; for tests
    /// (which places keys take).
    func placeForTests(of key: UInt64) -> (shard: Int, place: Int, capacity: Int)? {
        let shard = Self.shard(of: key)
        guard let place = shards[shard].placeForTests(of: key) else { return nil }
        return (shard, place, shards[shard].capacity)
    }

    mutating func removeAll() {
        shards = Array(repeating: ProbingTable(), count: Self.shardCount)
        count = 0
        keyBound = 0
    }
}
