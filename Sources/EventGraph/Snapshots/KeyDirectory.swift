/// Where each object of one entity is: key → slot (chunk × ``ColumnChunk/slotCapacity`` + position).
///
/// The map is split into ``shardCount`` dictionaries by the key's low bits, so that a commit made while a reader
/// holds an older version copies only the shards of the keys it touches, not a map of every object.
struct KeyDirectory: Sendable {
    static let shardCount = 256

    private var shards: [[UInt64: Int]] = Array(repeating: [:], count: shardCount)
    private(set) var count = 0

    @inline(__always)
    private static func shard(of key: UInt64) -> Int { Int(truncatingIfNeeded: key & UInt64(shardCount - 1)) }

    subscript(key: UInt64) -> Int? { shards[Self.shard(of: key)][key] }

    /// Records the slot of a key.
    mutating func set(_ slot: Int, for key: UInt64) {
        if shards[Self.shard(of: key)].updateValue(slot, forKey: key) == nil { count += 1 }
    }

    /// Forgets a key; returns its slot.
    @discardableResult
    mutating func remove(_ key: UInt64) -> Int? {
        guard let slot = shards[Self.shard(of: key)].removeValue(forKey: key) else { return nil }
        count -= 1
        return slot
    }

    /// Makes room for `additional` more keys.
    mutating func reserveCapacity(adding additional: Int) {
        let perShard = (count + additional) / Self.shardCount + 1
        for index in shards.indices where shards[index].capacity < perShard {
            shards[index].reserveCapacity(perShard * 5 / 4)
        }
    }

    mutating func removeAll() {
        shards = Array(repeating: [:], count: Self.shardCount)
        count = 0
    }
}
