internal import CPrefetch

/// Where each object of one entity is: key → slot (chunk × ``ColumnChunk/slotCapacity`` + position).
///
/// A store hands out its keys in ascending order, so an entity's keys are usually dense: those go to **pages**, one
/// `UInt32` per key (the slot + 1, 0 for none) in pages of ``pageKeyCount`` keys, found by the key alone — one load
/// that may miss the cache, 4 bytes a key (400 KB for 100,000 objects, against about 3 MB of hashed tables: a lookup
/// by ID misses the cache less often and the TLB less often). A page is allocated for a key only while the pages
/// stay at least a quarter full on average (``mayAllocatePage``) and below ``maximumPageCount``: the keys of an
/// entity that few objects of the store belong to, keys far apart, and keys a crafted file chose, go to the
/// **shards** instead, ``shardCount`` hashed tables split by the key's low bits.
///
/// A key is in the pages or in the shards, never both: a set first updates a key the shards hold. Both parts are
/// arrays of arrays, so that a commit made while a reader holds an older version copies only the page or shard of
/// the keys it touches (and the outer array), not a map of every object. Each shard is a ``ProbingTable`` (open
/// addressing, Fibonacci hashing of the key's other bits, sequential keys grouped): a lookup by ID runs no `Hasher`.
struct KeyDirectory: Sendable {
    static let shardCount = 256
    /// The keys of one page.
    static let pageKeyCount = 4096
    /// The most pages: keys from `maximumPageCount × pageKeyCount` (2^26) on always go to the shards, so that the
    /// array of pages stays within 128 KB whatever key a file holds.
    static let maximumPageCount = 1 << 14

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

    /// Page `key / pageKeyCount` holds slot + 1 of each of its keys at `key % pageKeyCount` (0: none); an empty
    /// array for a page not allocated. No longer than the largest page allocated.
    private var pages: [[UInt32]] = []
    private var allocatedPageCount = 0
    /// The number of keys in the pages.
    private var pagedCount = 0
    /// The hashed tables; empty until a key goes there.
    private var shards: [ProbingTable<Entry>] = []
    /// The number of keys in the shards.
    private var hashedCount = 0
    /// A key no key in the map exceeds (the largest ever set; removals leave it): a lookup of a larger key — a new
    /// object's, keys being allocated in ascending order — answers without probing a shard (a cache miss in a map
    /// of a million keys, per replayed insert).
    private var keyBound: UInt64 = 0

    /// The number of keys.
    var count: Int { pagedCount + hashedCount }

    @inline(__always)
    private static func shard(of key: UInt64) -> Int { Int(truncatingIfNeeded: key & UInt64(shardCount - 1)) }

    @inline(__always)
    private static func page(of key: UInt64) -> Int { Int(truncatingIfNeeded: key / UInt64(pageKeyCount)) }

    @inline(__always)
    private static func offset(of key: UInt64) -> Int { Int(truncatingIfNeeded: key % UInt64(pageKeyCount)) }

    subscript(key: UInt64) -> Int? {
        guard count > 0, key <= keyBound else { return nil }
        if let slot = pagedSlot(key) { return slot }
        guard hashedCount > 0 else { return nil }
        return shards[Self.shard(of: key)][key]?.slot
    }

    /// The slot of a key the pages hold. The pages are read through buffers: an element of the array of pages,
    /// taken as a value, was retained and released (two atomic instructions, which wait for the loads before them).
    @inline(__always)
    private func pagedSlot(_ key: UInt64) -> Int? {
        guard key < UInt64(pages.count) &* UInt64(Self.pageKeyCount) else { return nil }
        let stored = pages.withUnsafeBufferPointer { pages in
            pages[Self.page(of: key)].withUnsafeBufferPointer { page in
                page.isEmpty ? 0 : page[Self.offset(of: key)]
            }
        }
        return stored == 0 ? nil : Int(stored) - 1
    }

    /// Starts loading the directory's place for `key` without waiting for it: a lookup by ID calls this before it
    /// probes the context's registry, so that the two cache misses overlap (see ``ProbingTable/prefetch(_:)``).
    @inline(__always)
    func prefetch(_ key: UInt64) {
        guard count > 0, key <= keyBound else { return }
        if key < UInt64(pages.count) &* UInt64(Self.pageKeyCount) {
            // The address is taken in closures that call nothing and used after them (as in `ProbingTable`).
            let base = pages.withUnsafeBufferPointer { pages in
                pages[Self.page(of: key)].withUnsafeBufferPointer { $0.baseAddress }
            }
            if let base {
                eg_prefetch(UnsafeRawPointer(base + Self.offset(of: key)))
                return
            }
        }
        guard hashedCount > 0 else { return }
        shards[Self.shard(of: key)].prefetch(key)
    }

    /// Records the slot of a key.
    mutating func set(_ slot: Int, for key: UInt64) {
        precondition(slot >= 0, "slot \(slot) of key \(key) is negative")
        if key > keyBound { keyBound = key }
        if hashedCount > 0, shards[Self.shard(of: key)][key] != nil {
            shards[Self.shard(of: key)].update(Entry(key: key, slot: slot))
            return
        }
        if slot < Int(UInt32.max), makePage(for: key) {
            if Self.exchange(UInt32(slot + 1), in: &pages[Self.page(of: key)], at: Self.offset(of: key)) == 0 {
                pagedCount += 1
            }
            return
        }
        // A slot too large for a page (4 billion objects) leaves the page's entry for the shards.
        if pagedSlot(key) != nil {
            Self.exchange(0, in: &pages[Self.page(of: key)], at: Self.offset(of: key))
            pagedCount -= 1
        }
        if shards.isEmpty { shards = Array(repeating: ProbingTable(), count: Self.shardCount) }
        if shards[Self.shard(of: key)].update(Entry(key: key, slot: slot)) == nil { hashedCount += 1 }
    }

    /// Writes a page's entry through one access to it; returns what it held.
    @inline(__always) @discardableResult
    private static func exchange(_ stored: UInt32, in page: inout [UInt32], at offset: Int) -> UInt32 {
        let previous = page[offset]
        page[offset] = stored
        return previous
    }

    /// Whether the page of `key` is allocated, allocating it when the pages may grow (see ``mayAllocatePage``).
    private mutating func makePage(for key: UInt64) -> Bool {
        guard key < UInt64(Self.maximumPageCount) &* UInt64(Self.pageKeyCount) else { return false }
        let page = Self.page(of: key)
        if page < pages.count, !pages[page].isEmpty { return true }
        guard mayAllocatePage else { return false }
        if page >= pages.count { pages.append(contentsOf: repeatElement([], count: page + 1 - pages.count)) }
        pages[page] = Array(repeating: 0, count: Self.pageKeyCount)
        allocatedPageCount += 1
        return true
    }

    /// Whether one more page may be allocated: the first always; then while the pages, with the new one, would be
    /// at least a quarter full on average (4 bytes a key in a full page, 16 in a page a quarter full: no more than
    /// a shard's table at most half full takes, at 16 bytes a place).
    private var mayAllocatePage: Bool {
        allocatedPageCount == 0 || (allocatedPageCount + 1) * Self.pageKeyCount <= 4 * (pagedCount + 1)
    }

    /// Forgets a key; returns its slot.
    @discardableResult
    mutating func remove(_ key: UInt64) -> Int? {
        if let slot = pagedSlot(key) {
            Self.exchange(0, in: &pages[Self.page(of: key)], at: Self.offset(of: key))
            pagedCount -= 1
            return slot
        }
        guard hashedCount > 0, let entry = shards[Self.shard(of: key)].remove(key) else { return nil }
        hashedCount -= 1
        return entry.slot
    }

    /// Makes room for `additional` more keys: in the shards when they already hold keys (an entity whose keys do
    /// not fit the pages); the pages are allocated whole as keys reach them.
    mutating func reserveCapacity(adding additional: Int) {
        guard hashedCount > 0 else { return }
        let perShard = (hashedCount + additional) / Self.shardCount + 1
        for index in shards.indices where shards[index].capacity < perShard * 2 {
            shards[index].reserveCapacity(perShard * 5 / 4)
        }
    }

    /// The number of keys the pages hold and the number of pages allocated; for tests (which part keys go to).
    var pageStatistics: (pagedCount: Int, pageCount: Int) { (pagedCount, allocatedPageCount) }

    /// The longest walk from a key's home to its place in any shard, and whether any shard took a seed because keys
    /// piled up (see ``ProbingTable``); for tests.
    var probeStatistics: (longestProbe: Int, isSeeded: Bool) {
        shards.reduce((0, false)) { ($0.0 < $1.longestProbe ? $1.longestProbe : $0.0, $0.1 || $1.isSeeded) }
    }

    /// The shard of a key the shards hold and its entry's place in the shard's table, and that table's number of
    /// places; for tests (which places keys take).
    func placeForTests(of key: UInt64) -> (shard: Int, place: Int, capacity: Int)? {
        guard hashedCount > 0 else { return nil }
        let shard = Self.shard(of: key)
        guard let place = shards[shard].placeForTests(of: key) else { return nil }
        return (shard, place, shards[shard].capacity)
    }

    mutating func removeAll() {
        self = KeyDirectory()
    }
}
