import LogFormat

/// The digest's words for the live objects of one entity (``StoreState/addDigest(ofEntity:model:to:)``): each
/// object's words hashed by a chain of its own and added to a ``DigestSum``, a chunk at a time.
///
/// An object's words are: its entity's reference word (``referenceWord(store:entityName:)`` of this store, zero, and
/// its entity's name), the name of each persistent property in name order, its key, then for each of those
/// properties a kind byte and its value:
/// - an attribute (0xA0): its value as `DigestHasher.combine(_:)` hashes it (a property the object's row does not
///   have counts as null);
/// - a to-one relationship (0xA1): 0 when empty, else the target's reference (its reference word and key);
/// - an ordered to-many relationship (0xA2): the target count, then each target's reference in order;
/// - an unordered one (0xA2): the target count, then the sum, modulo 2^128, of `DigestSum.mix` of each target's
///   reference (its reference word in the high 64 bits, its key in the low), low word first: the same for the same
///   set in any order, with no sort, and each target's term computed apart from the others'.
///
/// All the words before the key are the same for every object of the entity, so the chain of an object starts from
/// ``seed``, the chain of those words.
///
/// A chunk is hashed property by property over a batch of its objects, each with its own chain: the columns are read
/// one after another, each from start to end (the prefetcher follows one column, where an object at a time read
/// a slot of every column), and the chains of a batch are independent, so the processor hashes several at once (one
/// chain is a multiply per word, each waiting for the one before).
///
/// It holds what the words are made from, read-only once made: the entity's table (a version of the state, never
/// modified: chunks still on disk are loaded through their own lock), the property plan and the reference words.
/// Any number of threads hash its chunks at once.
final class EntityDigestWords: Sendable {
    private let table: EntityColumns
    /// The persistent properties in name order, with their orderedness.
    private let plan: [(index: Int, isOrdered: Bool)]
    /// The chain of the words every object of the entity begins with (see the type's discussion).
    private let seed: DigestHasher
    /// The words that stand for the stores and entities references name (shared by the entities of one digest).
    private let referenceWords: DigestReferenceWords

    /// The most objects whose chains are hashed side by side.
    static let batchSize = 256

    /// The number of live objects.
    var objectCount: Int { table.count }

    /// The number of chunks (``add(chunk:to:)``'s indices).
    var chunkCount: Int { table.chunkCount }

    /// - Parameter referenceWords: the state's reference words, when the caller hashes several entities (made once
    ///   for all of them); `nil` makes them.
    init(
        state: StoreState, entityIndex: Int, model: ObjectModel, referenceWords: DigestReferenceWords? = nil
    ) {
        self.referenceWords = referenceWords ?? DigestReferenceWords(state: state, model: model)
        let entity = model.entities[entityIndex]
        // Once per entity: its persistent properties in name order, with their orderedness.
        let properties = entity.properties.indices.filter { entity.isPersistentProperty[$0] }
            .sorted { entity.properties[$0].name < entity.properties[$1].name }
        plan = properties.map { (index: $0, isOrdered: entity.properties[$0].relationship?.isOrdered ?? false) }
        var seed = DigestHasher()
        seed.combine(integer: Self.referenceWord(store: .zero, entityName: entity.name))
        for property in properties { seed.combine(string: entity.properties[property].name) }
        self.seed = seed
        self.table = state.tables[entityIndex]
    }

    /// The word that stands for a store and an entity in every reference to one of its objects: `DigestSum.mix` of
    /// the chain of the store's UUID (high, low; zero for the store hashed) and the entity's name, its low 64 bits.
    static func referenceWord(store: LogUUID, entityName: String) -> UInt64 {
        var chain = DigestHasher()
        chain.combine(integer: store.high)
        chain.combine(integer: store.low)
        chain.combine(string: entityName)
        return UInt64(truncatingIfNeeded: DigestSum.mix(chain.state))
    }

    /// Adds the hashes of the live objects of one chunk to `sum` (a chunk still on disk is loaded).
    func add(chunk chunkIndex: Int, to sum: inout DigestSum) {
        let chunk = table.chunk(at: chunkIndex)
        var positions: [Int] = []
        positions.reserveCapacity(Self.batchSize)
        var chains = [DigestHasher](repeating: seed, count: Self.batchSize)
        chunk.columns.withUnsafeBufferPointer { columns in
            chains.withUnsafeMutableBufferPointer { chains in
                for (wordIndex, word) in chunk.liveBits.enumerated() where word != 0 {
                    var bits = word
                    while bits != 0 {
                        positions.append(wordIndex * 64 + bits.trailingZeroBitCount)
                        bits &= bits - 1
                        if positions.count == Self.batchSize {
                            add(positions, of: chunk, columns: columns, chains: chains, to: &sum)
                            positions.removeAll(keepingCapacity: true)
                        }
                    }
                }
                if !positions.isEmpty {
                    add(positions, of: chunk, columns: columns, chains: chains, to: &sum)
                }
            }
        }
    }

    /// Hashes the objects at `positions` of `chunk` side by side, property by property, and adds them to `sum`.
    private func add(
        _ positions: [Int], of chunk: ColumnChunk, columns buffer: UnsafeBufferPointer<Column>,
        chains: UnsafeMutableBufferPointer<DigestHasher>, to sum: inout DigestSum
    ) {
        for (batchIndex, position) in positions.enumerated() {
            chains[batchIndex] = seed
            chains[batchIndex].combine(integer: chunk.keys[position])
        }
        // Columns are borrowed through a pointer: `chunk.columns[i]` (and an unsafe buffer's subscript) copied the
        // whole column (a retain and a release of each of its storages) for every value.
        let columns = buffer.baseAddress  // nil only without columns, when every value count is 0
        for property in plan {
            guard property.index < buffer.count, let column = columns.map({ $0 + property.index }) else {
                for batchIndex in positions.indices { Self.combineAbsent(into: &chains[batchIndex]) }
                continue
            }
            for (batchIndex, position) in positions.enumerated() {
                if property.index < Int(chunk.valueCounts[position]) {
                    combine(column, at: position, isOrdered: property.isOrdered, into: &chains[batchIndex])
                } else {
                    Self.combineAbsent(into: &chains[batchIndex])
                }
            }
        }
        for batchIndex in positions.indices { sum.add(object: chains[batchIndex]) }
    }

    /// The words of a property an object's row does not have: it counts as null.
    @inline(__always)
    private static func combineAbsent(into chain: inout DigestHasher) {
        chain.combine(byte: 0xA0)
        chain.combine(AttributeValue.null)
    }

    /// One property's words for one object: its kind byte (0xA0 attribute, 0xA1 to-one, 0xA2 to-many) and its
    /// value. Attributes are hashed from their storage without building a row, a value or a string (the same words as
    /// hashing the decoded value; see `StoreState.combineDigest(of:tag:at:into:)`).
    @inline(__always)
    private func combine(
        _ column: UnsafePointer<Column>, at position: Int, isOrdered: Bool, into chain: inout DigestHasher
    ) {
        // Every read goes through the column's address: a column read as a value (a method called on `columns[i]`,
        // or the column passed on) was copied whole, a retain and a release of each of its storages per value —
        // most of the digest's time in h46's profile of compact-1m.
        switch Column.tag(of: column, at: position) {
        case .toOneNil:
            chain.combine(byte: 0xA1)
            chain.combine(byte: 0)
        case .toOne:
            chain.combine(byte: 0xA1)
            combine(Column.toOneTarget(of: column, at: position), into: &chain)
        case .toMany:
            chain.combine(byte: 0xA2)
            // The targets are read in place; the closure captures the reference words' address, not `self`: one that
            // did retained and released `self` for every to-many value, and so did every other thread hashing the
            // same entity, on the same reference count (`egctl replay`'s profile: 4.6 % of its samples in those
            // retains).
            let words = referenceWords.words
            let entityCount = referenceWords.entityCount
            if isOrdered {
                Column.withManyTargets(of: column, at: position) { targets in
                    chain.combine(integer: UInt64(targets.count))
                    for target in targets {
                        chain.combine(integer: Self.referenceWord(of: target, in: words, entityCount: entityCount))
                        chain.combine(integer: target.key)
                    }
                }
            } else {
                let (count, sum) = Column.withManyTargets(of: column, at: position) { targets in
                    var sum: UInt128 = 0
                    for target in targets {
                        let word = Self.referenceWord(of: target, in: words, entityCount: entityCount)
                        sum &+= DigestSum.mix(UInt128(word) << 64 | UInt128(target.key))
                    }
                    return (targets.count, sum)
                }
                chain.combine(integer: UInt64(count))
                chain.combine(integer: UInt64(truncatingIfNeeded: sum))
                chain.combine(integer: UInt64(truncatingIfNeeded: sum >> 64))
            }
        case .absent:
            Self.combineAbsent(into: &chain)
        case let tag:
            chain.combine(byte: 0xA0)
            StoreState.combineDigest(of: column, tag: tag, at: position, into: &chain)
        }
    }

    /// The reference word of a target (see ``DigestReferenceWords``); one whose store or entity index the tables do
    /// not have (a damaged file's) gets a word of its own, made from the indices.
    @inline(__always)
    private static func referenceWord(
        of target: ObjectReference, in words: UnsafeBufferPointer<UInt64>, entityCount: Int
    ) -> UInt64 {
        let index = Int(target.storeIndex) &* entityCount &+ Int(target.entityIndex)
        guard Int(target.entityIndex) < entityCount, index < words.count else {
            return referenceWord(
                store: LogUUID(high: UInt64(target.storeIndex), low: .max), entityName: "#\(target.entityIndex)")
        }
        return words[index]
    }

    @inline(__always)
    private func combine(_ reference: ObjectReference, into chain: inout DigestHasher) {
        chain.combine(
            integer: Self.referenceWord(
                of: reference, in: referenceWords.words, entityCount: referenceWords.entityCount))
        chain.combine(integer: reference.key)
    }
}

/// The reference word (``EntityDigestWords/referenceWord(store:entityName:)``) of every (store index, entity index)
/// pair a reference of a state can name, made once for a digest: read through a pointer (no array access, a retain
/// and a release, per reference). Store index `s`, entity `e` is at `s * entityCount + e`.
final class DigestReferenceWords: @unchecked Sendable {
    // @unchecked Sendable: `words` is written only in `init` and freed in `deinit`, when no thread can read it.
    let words: UnsafeBufferPointer<UInt64>
    let entityCount: Int

    init(state: StoreState, model: ObjectModel) {
        let names = model.entities.map(\.name)
        let stores = [LogUUID.zero] + state.foreignStores
        let words = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: stores.count * names.count)
        for (storeIndex, store) in stores.enumerated() {
            for (entity, name) in names.enumerated() {
                words[storeIndex * names.count + entity] = EntityDigestWords.referenceWord(
                    store: store, entityName: name)
            }
        }
        self.words = UnsafeBufferPointer(words)
        entityCount = names.count
    }

    deinit { words.deallocate() }
}
