import Foundation
import LogFormat

/// One index stored in a checkpoint (format 1.4, `Docs/FileFormat-Checkpoints.md` §7): sorted runs of (values,
/// key) entries in index chunks that stay on disk until a lookup needs one. A lookup reads only the chunks whose
/// bounds (from the directory) may hold its values.
///
/// The entries are those of the checkpoint: a reader applies the tail on top (``StoreState/holder(of:)`` checks a
/// found key against the object's current values; attribute indexes replay the tail's changes on top).
struct CheckpointIndex: Sendable {
    let kind: CheckpointIndexKind
    /// The entity whose objects the entries hold.
    let entityIndex: Int
    /// For a uniqueness index: the constraint (its owner, ordinal and attributes); `nil` for an attribute index. A
    /// later schema frame that declares the same constraint otherwise renumbers it (with ``storedOrder``).
    var constraint: UniqueConstraint?
    /// For a uniqueness index whose constraint the model declares with its attributes in another order than the
    /// index was written in (the same constraint: the shape keeps a constraint's attributes as a set): for each value
    /// of a stored entry, the position of its attribute in the constraint's tuple. `nil` when the orders agree.
    var storedOrder: [Int]? = nil
    /// For an attribute index: the property it covers.
    let propertyIndex: Int
    let arity: Int
    /// What the errors name: the file is the source's, the index is described by ``name``.
    let name: String
    let chunks: [LazyIndexChunk]
    /// The checkpoint's chunks of the entity: what the entries are rebuilt from when an index chunk is damaged.
    var entityChunks: [LazyColumnChunk] = []
    /// The entries rebuilt from ``entityChunks`` once a damaged chunk is met, shared by every version of the state.
    let replacement = CheckpointIndexReplacement()

    /// The keys of the checkpoint's objects whose values equal `values` in the index's order, in key order: from
    /// the stored chunks whose bounds hold `values`, or, once one of the index's chunks is found damaged, from the
    /// entries rebuilt in memory from the entity's checkpoint chunks (once, reported once: ``replacement``).
    ///
    /// `values` are in the constraint's order; the index is read in its own (``storedOrder``).
    ///
    /// - Throws: the error of an entity chunk that cannot be loaded when the index is rebuilt (nothing is kept: the
    ///   next lookup tries the rebuild again), or of an index chunk whose read failed (an I/O error, tried again by
    ///   its box and not kept: the index is not replaced for it).
    func keys(matching values: [AttributeValue]) throws(EventGraphError) -> [UInt64] {
        let stored = storedOrder.map { order in order.map { values[$0] } } ?? values
        if let rebuilt = replacement.entries { return rebuilt[stored] ?? [] }
        do {
            return try storedKeys(matching: stored)
        } catch  where error.isFailedRead {
            // Not damage: the chunk's box tried the read again and keeps nothing; the next lookup reads again.
            throw error
        } catch {
            return try replacement.build(after: error, index: self)[stored] ?? []
        }
    }

    /// Where its chunks are in the checkpoint's file, for a compaction that copies them; `nil` when its entries are
    /// not in the order the model's constraint gives its values (then a copy would not be what a build writes).
    var frames: StoredIndexFrames? {
        guard storedOrder == nil, let first = chunks.first else { return nil }
        return StoredIndexFrames(
            kind: kind, constraint: constraint, propertyIndex: propertyIndex, name: name,
            entries: chunks.map(\.entry), source: first.source)
    }

    /// The properties of a stored entry's values, in the index's order.
    var storedPropertyIndices: [Int] {
        guard let constraint else { return [propertyIndex] }
        return storedOrder.map { order in order.map { constraint.propertyIndices[$0] } } ?? constraint.propertyIndices
    }

    /// The keys of `values` from the stored chunks.
    ///
    /// - Throws: ``EventGraphError/Code/log`` naming the file, the index, the chunk and its byte offset when one of
    ///   those chunks is damaged.
    func storedKeys(matching values: [AttributeValue]) throws(EventGraphError) -> [UInt64] {
        // The first chunk whose last entry is not below `values`.
        var low = 0
        var high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if Self.order(chunks[middle].entry.lastValues, values) == .orderedAscending {
                low = middle + 1
            } else {
                high = middle
            }
        }
        var keys: [UInt64] = []
        var chunkIndex = low
        while chunkIndex < chunks.count, Self.order(chunks[chunkIndex].entry.firstValues, values) != .orderedDescending
        {
            let entries = try chunks[chunkIndex].load()
            var position = Self.firstPosition(in: entries) { Self.order($0.values, values) == .orderedAscending }
            while position < entries.count, Self.order(entries[position].values, values) == .orderedSame {
                keys.append(entries[position].key)
                position += 1
            }
            chunkIndex += 1
        }
        return keys
    }

    /// Every entry in the index's order (reads every chunk).
    ///
    /// - Throws: the error of the first damaged chunk.
    func allEntries() throws(EventGraphError) -> [CheckpointIndexEntry] {
        var entries: [CheckpointIndexEntry] = []
        entries.reserveCapacity(chunks.reduce(0) { $0 + Int($1.entry.entryCount) })
        for chunk in chunks { entries += try chunk.load() }
        return entries
    }

    /// The number of chunks no lookup has read yet (a probe for tests).
    var unreadChunkCount: Int { chunks.reduce(0) { $0 + ($1.isLoaded ? 0 : 1) } }

    // MARK: - Order

    /// The order of entries: values one after the other by ``AttributeIndex/order(_:_:)``.
    static func order<A: Collection<AttributeValue>, B: Collection<AttributeValue>>(_ a: A, _ b: B) -> ValueOrder {
        for (x, y) in zip(a, b) {
            let order = AttributeIndex.order(x, y)
            if order != .orderedSame { return order }
        }
        return a.count == b.count ? .orderedSame : (a.count < b.count ? .orderedAscending : .orderedDescending)
    }

    /// Whether entry `a` comes before entry `b` (values, then key).
    static func precedes(_ a: CheckpointIndexEntry, _ b: CheckpointIndexEntry) -> Bool {
        precedes(a.values, a.key, b.values, b.key)
    }

    /// Whether the entry of values `a` and key `aKey` comes before that of `b` and `bKey` (values, then key).
    static func precedes<A: Collection<AttributeValue>, B: Collection<AttributeValue>>(
        _ a: A, _ aKey: UInt64, _ b: B, _ bKey: UInt64
    ) -> Bool {
        switch order(a, b) {
        case .orderedAscending: true
        case .orderedDescending: false
        case .orderedSame: aKey < bKey
        }
    }

    private static func firstPosition(in entries: [CheckpointIndexEntry], _ isBefore: (CheckpointIndexEntry) -> Bool)
        -> Int
    {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if isBefore(entries[middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Says on standard error that a damaged index is answered from the entity's chunks instead (a lookup cannot
    /// throw; it must not give a wrong answer either).
    static func reportFallback(_ error: EventGraphError) {
        FileHandle.standardError.write(
            Data("EventGraph: \(error.message); answering from the entity's chunks instead\n".utf8))
    }

    /// The entries the checkpoint's objects give this index, by values in the index's order: what the stored chunks
    /// would hold, computed from the entity's checkpoint chunks.
    ///
    /// - Throws: the error of an entity chunk that cannot be loaded: without its objects, the entries would say
    ///   that they do not exist.
    fileprivate func entriesFromEntityChunks() throws(EventGraphError) -> [[AttributeValue]: [UInt64]] {
        let properties = storedPropertyIndices
        var entries: [[AttributeValue]: [UInt64]] = [:]
        for lazy in entityChunks {
            let chunk = try lazy.load()
            for position in chunk.keys.indices where chunk.isLive(position) {
                let values = properties.map { chunk.attributeValue(at: position, property: $0) }
                // As the writer: a uniqueness tuple with a null is not indexed; NaN has no place in the order.
                if kind == .unique && values.contains(.null) { continue }
                guard values.allSatisfy(AttributeIndex.isIndexable) else { continue }
                entries[values, default: []].append(chunk.keys[position])
            }
        }
        for values in entries.keys { entries[values]!.sort() }
        return entries
    }
}

/// What replaces a stored index once one of its chunks is found damaged: its entries rebuilt in memory from the
/// entity's checkpoint chunks, once, so that later lookups neither read the damaged chunk again nor scan the entity
/// each time; the damage is reported once, when it is found. Shared (a class) by every version of the state, like
/// the chunks it stands for.
///
/// Locks: its `LockedValue` is held while it rebuilds (threads that meet the damage at once rebuild once), and the
/// rebuild takes the lock of each entity chunk it loads (``LazyColumnChunk``): **replacement lock → chunk lock**,
/// never the other way round. The store's state lock is never held meanwhile: a lookup reads a stored uniqueness
/// index after letting it go (``StoreState/readStoredUniqueLookups(_:of:)``), so readers and saves go on while
/// an index is rebuilt.
final class CheckpointIndexReplacement: Sendable {
    private struct State: Sendable {
        var built: Built?
        /// How many times the damage was reported.
        var reportCount = 0
    }

    private struct Built: Sendable {
        var entries: [[AttributeValue]: [UInt64]]
        var damage: EventGraphError
    }

    private let state = LockedValue(State())

    /// The rebuilt entries, once built.
    var entries: [[AttributeValue]: [UInt64]]? { state.withLock { $0.built?.entries } }

    /// The damage that made the index unusable, once found: its message names the file, the index, the chunk and
    /// its byte offset.
    var damage: EventGraphError? { state.withLock { $0.built?.damage } }

    /// How many times the damage was reported (a probe for tests: once).
    var reportCount: Int { state.withLock { $0.reportCount } }

    /// Builds the entries the first time (reporting `error` on standard error), the same entries afterwards.
    ///
    /// - Throws: the error of an entity chunk that cannot be loaded (nothing is kept; the damage is reported once
    ///   all the same).
    fileprivate func build(after error: EventGraphError, index: CheckpointIndex) throws(EventGraphError)
        -> [[AttributeValue]: [UInt64]]
    {
        try state.withLock { (state) throws(EventGraphError) in
            if let built = state.built { return built.entries }
            if state.reportCount == 0 {
                CheckpointIndex.reportFallback(error)
                state.reportCount += 1
            }
            let entries = try index.entriesFromEntityChunks()
            state.built = Built(entries: entries, damage: error)
            return entries
        }
    }
}

/// Where one stored index's chunks are in its checkpoint's file: what a compaction copies them from when the index's
/// entity has not changed since (``StoreState/builtCheckpointIndexes(model:entities:copyingStored:)``). Unlike the
/// ``CheckpointIndex`` it comes from, it holds no entries, so a state keeps it for as long as it reads that checkpoint.
struct StoredIndexFrames: Sendable {
    let kind: CheckpointIndexKind
    /// For a uniqueness index, its constraint (in the model's numbering and order).
    let constraint: UniqueConstraint?
    /// For an attribute index, its property.
    let propertyIndex: Int
    /// What messages call it (``CheckpointIndex/name``).
    let name: String
    /// The directory's entries of its chunks, in order.
    let entries: [IndexChunkEntry]
    let source: CheckpointChunkSource

    /// Every chunk as the checkpoint stores it, read again and verified (checksums, type, checkpoint; not decoded);
    /// `nil` when one does not verify or cannot be read: a compaction then builds the index from the objects, and
    /// says so on standard error (as a lookup that meets a damaged index does). Safe from any thread.
    func storedChunks() -> [StoredIndexChunk]? {
        var stored: [StoredIndexChunk] = []
        stored.reserveCapacity(entries.count)
        for (position, entry) in entries.enumerated() {
            do {
                stored.append(
                    try source.reader.storedIndexChunk(entry, checkpointTransactionID: source.checkpointTransactionID))
            } catch {
                FileHandle.standardError.write(
                    Data(
                        ("EventGraph: chunk \(position) of \(name) cannot be copied (\(error)); building the index from "
                            + "the entity's objects instead\n").utf8))
                return nil
            }
        }
        return stored
    }
}

/// One index chunk of a checkpoint, read, verified (frame, directory bounds, order) and decoded the first time a
/// lookup needs it: the box is shared by every version of the state, and keeps the entries once read.
///
/// It reads by the same rule as an entity chunk's box (``CheckpointChunkRead``): a read that fails with an I/O error
/// is tried again up to ``CheckpointChunkRead/retryCount`` times and not kept (the next lookup reads again); damage
/// is kept, and every later load throws it without reading.
final class LazyIndexChunk: Sendable {
    let entry: IndexChunkEntry
    let chunkIndex: Int
    /// The checkpoint's file (through the descriptor the store opened) and transaction.
    let source: CheckpointChunkSource
    private let arity: Int
    private let indexName: String
    /// The chunk's entries once read, or its damage (a leaf lock, held while the chunk is read).
    private let state = LockedValue(State())

    private struct State: Sendable {
        var entries: [CheckpointIndexEntry]?
        /// Why the chunk cannot be used, once a read found it damaged (a read that failed is not kept).
        var failure: EventGraphError?
        /// How many times it has been read from the file (each try of a read that failed counts).
        var readCount = 0
    }

    init(entry: IndexChunkEntry, chunkIndex: Int, arity: Int, indexName: String, source: CheckpointChunkSource) {
        self.entry = entry
        self.chunkIndex = chunkIndex
        self.arity = arity
        self.indexName = indexName
        self.source = source
    }

    /// Whether it has been read (successfully or not).
    var isLoaded: Bool { readCount > 0 }

    /// How many times it has been read from the file, for tests.
    var readCount: Int { state.withLock { $0.readCount } }

    /// The chunk's entries: read on the first call (under the box's own lock) and kept; a read that failed is tried
    /// again (``CheckpointChunkRead``).
    ///
    /// - Throws: ``EventGraphError/Code/log`` naming the file, the index, the chunk and its byte offset: the same
    ///   error on every call once damage is found; a read that failed ``CheckpointChunkRead/retryCount`` + 1 times
    ///   (``EventGraphError/isFailedRead``), which the next call tries again.
    func load() throws(EventGraphError) -> [CheckpointIndexEntry] {
        try state.withLock { state -> Result<[CheckpointIndexEntry], EventGraphError> in
            if let entries = state.entries { return .success(entries) }
            if let failure = state.failure { return .failure(failure) }
            let result = CheckpointChunkRead.retryingFailedReads(eachTry: { state.readCount += 1 }) {
                () throws(EventGraphError) -> [CheckpointIndexEntry] in try read()
            }
            switch result {
            case .success(let entries): state.entries = entries
            case .failure(let error): CheckpointChunkRead.keep(error, in: &state.failure)
            }
            return result
        }.get()
    }

    private func read() throws(EventGraphError) -> [CheckpointIndexEntry] {
        let entries: [CheckpointIndexEntry]
        do {
            entries = try source.reader.readIndexChunk(
                entry, arity: arity, checkpointTransactionID: source.checkpointTransactionID
            ).entries
        } catch {
            // The LogFormat error is kept as the underlying one only for a read that failed (which is tried again).
            throw damage(error.message, underlying: error.code == .io ? error : nil)
        }
        // The order is the object layer's (LogFormat does not order values): an entry out of order is damage.
        for position in entries.indices.dropFirst()
        where !CheckpointIndex.precedes(entries[position - 1], entries[position]) {
            throw damage("its entry \(position) (key \(entries[position].key)) is out of order")
        }
        return entries
    }

    private func damage(_ reason: String, underlying: LogFormatError? = nil) -> EventGraphError {
        EventGraphError(
            .log,
            "\(source.reader.path): chunk \(chunkIndex) of \(indexName) (byte offset \(entry.byteOffset)) in the "
                + "checkpoint at transaction \(source.checkpointTransactionID) cannot be loaded: \(reason)",
            underlying: underlying)
    }
}
