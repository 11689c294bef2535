import LogFormat
import Synchronization

/// A count of the changes to a store's entity versions (``StoreState/tables``), read without the store's lock.
///
/// Each change advances it under the lock, before the lock is let go: a reader that finds the count it last saw
/// under the lock knows that the version it took then is still the store's current one. A commit that happened
/// before the reader's load (a save of the same thread, or one that another thread's save was awaited for) is
/// seen: a load ordered after an atomic's write reads that write or a later one.
final class TablesGeneration: Sendable {
    private let value = Atomic<UInt64>(0)

    /// The number of changes so far.
    @inline(__always)
    var current: UInt64 { value.load(ordering: .acquiring) }

    /// Counts one change (called under the store's lock).
    @inline(__always)
    func advance() { value.wrappingAdd(1, ordering: .releasing) }
}

/// The version of one entity that a context last looked an object up in, with the store's ``TablesGeneration`` at
/// the time: a lookup by ID reads it without the store's lock while the count has not moved.
///
/// The lock's atomic instructions order every memory access around them, so the cache misses of a lookup by ID —
/// the context's registry place, the key directory's place, the slot's version — followed one another; without the
/// lock they overlap (h72's profile of fetch-by-id). The version is a value whose arrays a commit copies while it is
/// held (as any reader's): nothing it reads changes, and it is released when the context takes a newer one, saves,
/// or goes away.
struct EntityVersionCache {
    /// The entity whose version this is; -1 before the first lookup.
    private(set) var entityIndex = -1
    private(set) var generation: UInt64 = 0
    /// The version (empty before the first lookup).
    private(set) var version = EntityColumns(entityIndex: -1)
    /// How many times a version was taken under the store's lock into this cache (for tests).
    private(set) var takeCount = 0
    /// The key less the slot of the object the last lookup found (see ``predictedSlot(forKey:)``).
    private var keyLessSlot: UInt64 = 0
    /// Whether the last two lookups found their objects at the same ``keyLessSlot``.
    private var keyLessSlotRepeated = false
    /// How many lookups found their object at the slot ``predictedSlot(forKey:)`` gave (for tests).
    private(set) var predictedSlotCount = 0

    /// The slot where a lookup is likely to find `key`'s object, before the key directory is read: a store numbers
    /// its objects in the order they are inserted and an entity's chunks hold them in commit order, so the objects of
    /// an entity inserted one after another (the usual case) sit at their key less one offset. Known once two lookups
    /// in a row found their objects at the same offset; `nil` otherwise. A hint for prefetching only: a wrong slot
    /// costs a few useless loads, never a wrong answer.
    @inline(__always)
    func predictedSlot(forKey key: UInt64) -> Int? {
        guard keyLessSlotRepeated else { return nil }
        let slot = key &- keyLessSlot
        return slot <= UInt64(Int.max) ? Int(slot) : nil
    }

    /// Starts loading, without waiting, the bytes of `property`'s string or binary value at the slot predicted for
    /// `key` (see ``predictedSlot(forKey:)``), reading the slot's offset and length there, which a lookup asked for
    /// before it probed its registry: a lookup by ID calls this once the registry answered, so that the bytes load
    /// while it reads the found object or makes the fault. Nothing without a prediction or for -1.
    ///
    /// Mutating only so that a context's cache is read in place: called on a class's stored property, a
    /// non-mutating method read a copy of the cache (a retain and a release of each storage of its version, atomic
    /// instructions that waited for the registry's load before them).
    @inline(__always)
    mutating func prefetchPredictedBytes(forKey key: UInt64, property: Int) {
        guard property >= 0, let slot = predictedSlot(forKey: key) else { return }
        version.prefetchResidentBytes(slot, property: property)
    }

    /// Notes where the key directory found `key`'s object (see ``predictedSlot(forKey:)``); returns whether that is
    /// the slot predicted.
    @inline(__always)
    mutating func noteSlot(_ slot: Int, ofKey key: UInt64) -> Bool {
        let keyLessSlot = key &- UInt64(truncatingIfNeeded: slot)
        let predicted = keyLessSlotRepeated && keyLessSlot == self.keyLessSlot
        keyLessSlotRepeated = keyLessSlot == self.keyLessSlot
        self.keyLessSlot = keyLessSlot
        if predicted { predictedSlotCount &+= 1 }
        return predicted
    }

    /// Whether the cache holds `entityIndex`'s version of generation `generation`.
    @inline(__always)
    func holds(entityIndex: Int, generation: UInt64) -> Bool {
        self.entityIndex == entityIndex && self.generation == generation
    }

    /// Holds a version taken under the store's lock with the generation read there.
    mutating func hold(_ version: EntityColumns, generation: UInt64) {
        // Another entity's objects sit at other offsets.
        if version.entityIndex != entityIndex { keyLessSlotRepeated = false }
        self.version = version
        self.entityIndex = version.entityIndex
        self.generation = generation
        takeCount += 1
    }

    /// Lets the version go (a context that saves: a commit copies every array that a held version shares).
    mutating func release() {
        let (takeCount, predictedSlotCount) = (takeCount, predictedSlotCount)
        self = EntityVersionCache()
        self.takeCount = takeCount
        self.predictedSlotCount = predictedSlotCount
    }
}

extension Store {
    /// Makes `cache` hold the current version of `entityIndex`: taken under the lock only when the store's
    /// generation moved since, or the cache holds another entity.
    @inline(__always)
    func refresh(_ cache: inout EntityVersionCache, entityIndex: Int) {
        if cache.holds(entityIndex: entityIndex, generation: tablesGeneration.current) { return }
        takeVersion(into: &cache, entityIndex: entityIndex)
    }

    @inline(never)
    private func takeVersion(into cache: inout EntityVersionCache, entityIndex: Int) {
        // The generation is read under the lock with the version: every change advances it before the lock is let go.
        let (version, generation) = state.withLock { state in
            (state.version(ofEntity: entityIndex), tablesGeneration.current)
        }
        cache.hold(version, generation: generation)
    }

    /// ``committedRow(entityIndex:key:)`` read from the version `cache` holds, without the lock while the store's
    /// generation has not moved.
    @inline(__always)
    func committedRow(
        entityIndex: Int, key: UInt64, cache: inout EntityVersionCache, prefetchingProperty property: Int
    ) -> CommittedRow? {
        refresh(&cache, entityIndex: entityIndex)
        guard let slot = cache.version.directoryHit(key) else {
            // In no resident chunk: in a checkpoint chunk still on disk, or nowhere.
            do {
                return try cache.version.lookUpCommittedRow(forKey: key)
            } catch {
                Self.failLookUp(key: key, error)
            }
        }
        // A slot predicted had its entries and `property`'s asked for before the key directory was read (see
        // `prefetchCommittedRow(of:entityIndex:cache:prefetchingProperty:)`); asking again would copy its chunk.
        let predicted = cache.noteSlot(slot, ofKey: key)
        return cache.version.residentCommittedRow(
            atSlot: slot, key: key, prefetchingProperty: predicted ? -1 : property)
    }
}
