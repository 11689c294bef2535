internal import CPrefetch

/// An entry of a ``ProbingTable``: a key and what it maps to, or an empty place.
protocol ProbingTableEntry {
    associatedtype Key: Equatable
    /// An empty place.
    static var empty: Self { get }
    /// Whether the place is empty.
    var isEmpty: Bool { get }
    /// The entry's key (meaningless for an empty place).
    var key: Key { get }
    /// A 64-bit mix of a key whose top bits pick its home place (Fibonacci hashing: multiply by 2^64 / φ). When
    /// ``groupsSequentialKeys`` is true, it mixes the key's group (its value divided by 16), not the key.
    static func hash(_ key: Key) -> UInt64
    /// Whether keys that differ only in their last 4 bits share one hash, the key's place in its group of 16
    /// (``placeInGroup(_:)``) being added to the home: sequential keys then sit in neighbouring places.
    static var groupsSequentialKeys: Bool { get }
    /// The key's place in its group of 16 sequential keys, 0 to 15 (used when ``groupsSequentialKeys`` is true).
    static func placeInGroup(_ key: Key) -> Int
}

extension ProbingTableEntry {
    static var groupsSequentialKeys: Bool { false }
    static func placeInGroup(_ key: Key) -> Int { 0 }
}

extension ProbingTableEntry where Key == UInt64 {
    /// Fibonacci hashing of an object key (multiply by 2^64 / φ): dense keys spread evenly over the top bits.
    @inline(__always)
    static func hash(_ key: UInt64) -> UInt64 { key &* 0x9E37_79B9_7F4A_7C15 }
}

/// The bound on a ``ProbingTable``'s probe walks.
enum ProbingTableLimit {
    /// How many places an insert may walk past its home before the table takes a seed.
    static var longestAllowedProbe: Int { 128 }
}

/// An open-addressing table with linear probing, kept at most half full, without `Hasher`: the uniquing table of
/// a context (``ObjectRegistry``) and the key directory of an entity's columns (``KeyDirectory``).
///
/// Keys on the read path are dense and mostly sequential, which Fibonacci hashing spreads evenly; against a
/// `Dictionary` a lookup saves the two `Hasher` runs (seeding, SipHash finalization). Keys also come from files,
/// which may be crafted: Fibonacci hashing is a fixed multiplication, so keys chosen to share the top bits of their
/// product would pile up in one run and make every insert and lookup walk it (quadratic time to open a store). When
/// an insert walks more than ``ProbingTableLimit/longestAllowedProbe`` places, the table takes a random seed and places every entry
/// again by a seeded 64-bit mix of the entry's hash (MurmurHash3's finalizer), which keys written before the process
/// started cannot be chosen against. Benign keys rarely pay for it: runs of sequential keys at random offsets (50
/// runs of 1,000 in one context, `Benchmarks/compare`'s `predicate-indexed-range`) can pile up past the bound, as the
/// fixed multiplication places nearby runs' groups side by side, and take a seed once. A removal shifts the entries
/// after it back instead of leaving a tombstone, so lookups never walk over dead places. The entries are one Swift
/// array, so a copy of the table shares them until one side writes (copy-on-write, as ``KeyDirectory``'s shards
/// need).
struct ProbingTable<Entry: ProbingTableEntry> {
    private var entries: [Entry] = []
    /// `entries.count - 1` (the capacity is a power of two), or 0 while nothing was ever stored.
    private var mask = 0
    /// How far to shift the 64-bit hash so that its top bits index the table.
    private var shift: UInt64 = 63
    /// The number of entries.
    private(set) var count = 0
    /// 0 while places come from the entries' own hash; otherwise the random seed of the mix that places them.
    private var seed: UInt64 = 0

    /// Whether the table places its entries by a seeded mix (because keys piled up); for tests.
    var isSeeded: Bool { seed != 0 }

    /// The smallest table made.
    private static var minimumCapacity: Int { 16 }

    /// The number of places (for tests and memory accounting).
    var capacity: Int { entries.count }

    @inline(__always)
    private func home(of key: Entry.Key) -> Int {
        let hash = Entry.hash(key)
        let home = Int(truncatingIfNeeded: (seed == 0 ? hash : Self.mix(hash ^ seed)) >> shift)
        // A group's 16 keys take 16 neighbouring places from the group's home (a table has at least 16 places).
        guard Entry.groupsSequentialKeys else { return home }
        return (home &+ Entry.placeInGroup(key)) & mask
    }

    /// MurmurHash3's 64-bit finalizer: every bit of the result depends on every bit of `value`.
    private static func mix(_ value: UInt64) -> UInt64 {
        var value = value
        value ^= value >> 33
        value &*= 0xFF51_AFD7_ED55_8CCD
        value ^= value >> 33
        value &*= 0xC4CE_B9FE_1A85_EC53
        value ^= value >> 33
        return value
    }

    /// The place of `key` or of the empty place where it would go, and how many places past its home that is.
    private func placeAndDistance(of key: Entry.Key) -> (index: Int, distance: Int) {
        var index = home(of: key)
        var distance = 0
        while !entries[index].isEmpty {
            if entries[index].key == key { break }
            index = (index + 1) & mask
            distance += 1
        }
        return (index, distance)
    }

    /// The place of a key's entry, if the table holds it (for tests: which places keys take).
    func placeForTests(of key: Entry.Key) -> Int? {
        guard count > 0 else { return nil }
        let index = place(of: key)
        return entries[index].isEmpty ? nil : index
    }

    /// The longest walk from an entry's home to its place (for tests; goes through the whole table).
    var longestProbe: Int {
        var longest = 0
        for index in entries.indices where !entries[index].isEmpty {
            longest = Swift.max(longest, (index - home(of: entries[index].key)) & mask)
        }
        return longest
    }

    /// The place of `key`, or of the empty place where it would go (the table must have places).
    @inline(__always)
    private func place(of key: Entry.Key) -> Int {
        var index = home(of: key)
        while !entries[index].isEmpty {
            if entries[index].key == key { return index }
            index = (index + 1) & mask
        }
        return index
    }

    /// Starts loading the home place of `key` without waiting for it (a hint: ``eg_prefetch``), so that a lookup
    /// made soon after finds it in the cache while other loads were in flight: a lookup by ID issues the key
    /// directory's place before it probes the context's registry, and the two cache misses overlap.
    @inline(__always)
    func prefetch(_ key: Entry.Key) {
        guard count > 0 else { return }
        // The address is taken in a closure that calls nothing and used after it: a call inside made the array be
        // retained and released around it (two atomic instructions, which wait for the loads before them). A
        // prefetch of an address never faults.
        guard let base = entries.withUnsafeBufferPointer({ $0.baseAddress }) else { return }
        eg_prefetch(UnsafeRawPointer(base + home(of: key)))
    }

    /// The entry of a key.
    @inline(__always)
    subscript(key: Entry.Key) -> Entry? {
        guard count > 0 else { return nil }
        let entry = entries[place(of: key)]
        return entry.isEmpty ? nil : entry
    }

    /// Stores an entry; returns the one of the same key it replaces, if any.
    ///
    /// The entry is taken and swapped into its place, not copied: a copy retained what it holds (in a context's
    /// registry, the object of every fetched row) and the caller released its own reference right after.
    @discardableResult
    mutating func update(_ entry: consuming Entry) -> Entry? {
        if (count + 1) * 2 > entries.count { grow(toHold: count + 1) }
        let (index, distance) = placeAndDistance(of: entry.key)
        var previous = entry
        swap(&previous, &entries[index])
        if previous.isEmpty {
            count += 1
            if distance > ProbingTableLimit.longestAllowedProbe && seed == 0 { takeSeed() }
            return nil
        }
        return previous
    }

    /// Removes the entry of a key; returns it, if there was one.
    @discardableResult
    mutating func remove(_ key: Entry.Key) -> Entry? {
        guard count > 0 else { return nil }
        var hole = place(of: key)
        let removed = entries[hole]
        guard !removed.isEmpty else { return nil }
        entries[hole] = .empty
        count -= 1
        // Shift back each following entry of the run whose home is not between the hole and its place (cyclically),
        // so that every entry stays reachable from its home without tombstones.
        var index = (hole + 1) & mask
        while !entries[index].isEmpty {
            let home = home(of: entries[index].key)
            let stays = hole <= index ? (hole < home && home <= index) : (hole < home || home <= index)
            if !stays {
                entries[hole] = entries[index]
                entries[index] = .empty
                hole = index
            }
            index = (index + 1) & mask
        }
        return removed
    }

    /// Removes every entry; the table keeps its capacity unless told otherwise.
    mutating func removeAll(keepingCapacity: Bool = true) {
        guard keepingCapacity else {
            self = ProbingTable()
            return
        }
        guard count > 0 else { return }
        for index in entries.indices { entries[index] = .empty }
        count = 0
    }

    /// Removes every entry in one pass, calling `body` with each (in place, in no particular order) before it is
    /// removed; the table keeps its capacity.
    mutating func removeAll(calling body: (inout Entry) -> Void) {
        removeAll(examining: { _ in false }, calling: { entry, _ in body(&entry) })
    }

    /// Removes every entry in one pass over batches of 64 places: `examine` is called with each entry of a batch,
    /// then `body` with each entry of it and what `examine` said, before it is removed; the table keeps its capacity.
    ///
    /// For a teardown whose entries refer to objects that are no longer in the cache: `examine` only reads (a
    /// context's registry checks whether each object is referenced elsewhere), so the cache misses of a batch
    /// overlap, and `body`, whose removal releases each object (an atomic write, which waits for the miss before it),
    /// finds them in the cache.
    mutating func removeAll(examining examine: (inout Entry) -> Bool, calling body: (inout Entry, Bool) -> Void) {
        guard count > 0 else { return }
        entries.withUnsafeMutableBufferPointer { entries in
            var start = 0
            while start < entries.count {
                let end = Swift.min(start + 64, entries.count)
                var marks: UInt64 = 0
                for index in start..<end where !entries[index].isEmpty && examine(&entries[index]) {
                    marks |= 1 &<< UInt64(index - start)
                }
                for index in start..<end where !entries[index].isEmpty {
                    body(&entries[index], marks & (1 &<< UInt64(index - start)) != 0)
                    entries[index] = .empty
                }
                start = end
            }
        }
        count = 0
    }

    /// Makes room for `capacity` entries in all without growing.
    mutating func reserveCapacity(_ capacity: Int) {
        if capacity * 2 > entries.count { grow(toHold: capacity) }
    }

    /// Calls `body` with every entry, in no particular order.
    func forEach(_ body: (Entry) throws -> Void) rethrows {
        guard count > 0 else { return }
        for entry in entries where !entry.isEmpty { try body(entry) }
    }

    /// Rebuilds the table with room for at least `needed` entries at most half full.
    private mutating func grow(toHold needed: Int) {
        var capacity = Swift.max(Self.minimumCapacity, entries.count)
        while capacity < needed * 2 { capacity *= 2 }
        var old = Array(repeating: Entry.empty, count: capacity)
        swap(&old, &entries)
        mask = capacity - 1
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        if place(movingFrom: &old) && seed == 0 { takeSeed() }
    }

    /// Places every entry again by a seeded mix of its hash, at the same capacity.
    private mutating func takeSeed() {
        var generator = SystemRandomNumberGenerator()
        repeat { seed = generator.next() } while seed == 0
        var old = Array(repeating: Entry.empty, count: entries.count)
        swap(&old, &entries)
        place(movingFrom: &old)
    }

    /// Moves every entry of `old` to its place in ``entries`` (all empty, at their new capacity or seed); returns
    /// whether one of them lies more than ``ProbingTableLimit/longestAllowedProbe`` places past its home.
    ///
    /// Each entry is moved, not copied: a copy retains what the entry holds (in a context's registry, each object: one
    /// cache miss per object) and the old array's release releases it again. The place left holds an empty entry,
    /// which the old array's release destroys for nothing. (A table whose entries another copy shares, a key
    /// directory's shard, has them copied once by the mutable access.)
    @discardableResult
    private mutating func place(movingFrom old: inout [Entry]) -> Bool {
        var pileUp = false
        old.withUnsafeMutableBufferPointer { source in
            guard let base = source.baseAddress else { return }
            for position in source.indices where !source[position].isEmpty {
                let (index, distance) = placeAndDistance(of: source[position].key)
                let entry = (base + position).move()
                (base + position).initialize(to: .empty)
                entries[index] = entry
                pileUp = pileUp || distance > ProbingTableLimit.longestAllowedProbe
            }
        }
        return pileUp
    }
}

extension ProbingTable: Sendable where Entry: Sendable {}
