import LogFormat

/// The words one entity's live objects add to the state digest, for any run of them in key order, on any thread
/// (see ``StoreState/combineDigest(ofEntity:model:into:stoppingWhen:)``): what the digest needs of the state and
/// the model, read once per entity.
///
/// Values are read from the columns where they are stored: attributes are hashed from their storage without
/// building a row, a value or a string (the same words as hashing the decoded value).
struct EntityDigestWords: Sendable {
    private let entityIndex: Int
    private let table: EntityColumns
    /// The live objects as (key, slot), in key order: each object is read from its chunk when it is hashed, never
    /// all of an entity's rows at once (they would be a second copy of the state's largest entity).
    private let order: [(key: UInt64, slot: Int)]
    private let names: [String]
    /// The table of foreign stores, read once: the helpers below do not capture the whole state (a copy of it per
    /// call showed up in profiles).
    private let foreignStores: [LogUUID]
    /// The words of every name the digest hashes per object or per reference (the entities', then this entity's
    /// properties'), computed once into one buffer: hashing them is hashing the names, without a string read per
    /// value (`combine(string:)` per property of every object and per target of every list was a tenth of
    /// `egctl replay --summary`'s time).
    private let nameWordList: [UInt64]
    private let entityNameWords: [Range<Int>]
    /// The entity's persistent properties in name order, with their orderedness.
    private let plan: [(nameWords: Range<Int>, index: Int, isOrdered: Bool)]

    /// The number of live objects.
    var count: Int { order.count }

    init(state: StoreState, entityIndex: Int, model: ObjectModel) {
        self.entityIndex = entityIndex
        names = model.entities.map(\.name)
        foreignStores = state.foreignStores
        var nameWordList: [UInt64] = []
        entityNameWords = names.map { name in
            let start = nameWordList.count
            nameWordList += DigestHasher.words(of: name)
            return start..<nameWordList.count
        }
        let entity = model.entities[entityIndex]
        plan = entity.properties.indices.filter { entity.isPersistentProperty[$0] }
            .map {
                (
                    name: entity.properties[$0].name, index: $0,
                    isOrdered: entity.properties[$0].relationship?.isOrdered ?? false
                )
            }
            .sorted { $0.name < $1.name }
            .map { property in
                let start = nameWordList.count
                nameWordList += DigestHasher.words(of: property.name)
                return (nameWords: start..<nameWordList.count, index: property.index, isOrdered: property.isOrdered)
            }
        self.nameWordList = nameWordList
        table = state.tables[entityIndex]
        var order: [(key: UInt64, slot: Int)] = []
        order.reserveCapacity(table.count)
        table.forEachLiveSlot { chunk, position, slot in order.append((chunk.keys[position], slot)) }
        if !order.indices.dropFirst().allSatisfy({ order[$0 - 1].key < order[$0].key }) {
            order.sort { $0.key < $1.key }
        }
        self.order = order
    }

    /// A guess at the words of `objectCount` objects, to reserve a word list once: a word per property for its
    /// name and its kind, and a few for each value.
    func estimatedWordCount(_ objectCount: Int) -> Int { objectCount * (plan.count * 12 + 8) }

    /// Adds the objects at `objects` of the key order to `sink`, as the digest does.
    func combine<Sink: DigestWordSink>(_ objects: Range<Int>, into sink: inout Sink) {
        nameWordList.withUnsafeBufferPointer { nameWordBuffer in
            combine(objects, nameWordBuffer: nameWordBuffer, into: &sink)
        }
    }

    private func combine<Sink: DigestWordSink>(
        _ objects: Range<Int>, nameWordBuffer: UnsafeBufferPointer<UInt64>, into sink: inout Sink
    ) {
        let (names, foreignStores, entityNameWords) = (self.names, self.foreignStores, self.entityNameWords)
        func storeUUID(of reference: ObjectReference) -> LogUUID? {
            let index = Int(reference.storeIndex)
            guard index > 0, index <= foreignStores.count else { return nil }
            return foreignStores[index - 1]
        }
        func entityName(_ index: UInt32) -> String { Int(index) < names.count ? names[Int(index)] : "#\(index)" }
        // The words are read from the buffer without an array access (a retain and a release) per name.
        func nameWords(_ range: Range<Int>) -> UnsafeBufferPointer<UInt64> {
            UnsafeBufferPointer(rebasing: nameWordBuffer[range])
        }
        // Read once: `.zero` per reference called its global's accessor (every object's own reference included).
        let noStore = LogUUID.zero
        func combineReference(_ reference: ObjectReference, into sink: inout Sink) {
            let store = storeUUID(of: reference) ?? noStore
            sink.combine(integer: store.high)
            sink.combine(integer: store.low)
            if Int(reference.entityIndex) < entityNameWords.count {
                sink.combine(words: nameWords(entityNameWords[Int(reference.entityIndex)]))
            } else {
                sink.combine(string: entityName(reference.entityIndex))
            }
            sink.combine(integer: reference.key)
        }
        // The usual list holds objects of one store and one entity, whose canonical order is key order, and is
        // already in it (targets are appended as they are inserted): checked in one pass, not sorted.
        func isInKeyOrderOfOneEntity(_ targets: UnsafeBufferPointer<ObjectReference>) -> Bool {
            guard let first = targets.first else { return true }
            var previous: UInt64?
            for target in targets {
                guard target.storeIndex == first.storeIndex, target.entityIndex == first.entityIndex,
                    previous.map({ $0 < target.key }) ?? true
                else { return false }
                previous = target.key
            }
            return true
        }
        func sortedCanonically(_ targets: [ObjectReference]) -> [ObjectReference] {
            if let first = targets.first,
                targets.allSatisfy({ $0.storeIndex == first.storeIndex && $0.entityIndex == first.entityIndex })
            {
                return targets.sorted { $0.key < $1.key }
            }
            return targets.sorted { a, b in
                let (sa, sb) = (storeUUID(of: a) ?? .zero, storeUUID(of: b) ?? .zero)
                if sa != sb { return sa < sb }
                if a.entityIndex != b.entityIndex { return entityName(a.entityIndex) < entityName(b.entityIndex) }
                return a.key < b.key
            }
        }
        var chunkIndex = -1
        var chunk = ColumnChunk.unloaded
        for (_, slot) in order[objects] {
            if slot / ColumnChunk.slotCapacity != chunkIndex {
                chunkIndex = slot / ColumnChunk.slotCapacity
                chunk = table.chunk(at: chunkIndex)
            }
            let position = slot % ColumnChunk.slotCapacity
            combineReference(ObjectReference(entityIndex: UInt32(entityIndex), key: chunk.keys[position]), into: &sink)
            let valueCount = min(Int(chunk.valueCounts[position]), chunk.columns.count)
            // Columns are borrowed through a pointer: `chunk.columns[i]` (and an unsafe buffer's subscript) copied
            // the whole column (a retain and a release of each of its storages) for every value.
            chunk.columns.withUnsafeBufferPointer { buffer in
                let columns = buffer.baseAddress  // nil only without columns, when `valueCount` is 0
                for property in plan {
                    sink.combine(words: nameWords(property.nameWords))
                    guard property.index < valueCount, let column = columns.map({ $0 + property.index }) else {
                        sink.combine(byte: 0xA0)
                        sink.combine(AttributeValue.null)
                        continue
                    }
                    // Every read goes through the column's address: a column read as a value (a method called on
                    // `columns[i]`, or the column passed on) was copied whole, a retain and a release of each of its
                    // storages per value — most of the digest's time in h46's profile of compact-1m.
                    switch Column.tag(of: column, at: position) {
                    case .toOneNil:
                        sink.combine(byte: 0xA1)
                        sink.combine(byte: 0)
                    case .toOne:
                        sink.combine(byte: 0xA1)
                        combineReference(Column.toOneTarget(of: column, at: position), into: &sink)
                    case .toMany:
                        sink.combine(byte: 0xA2)
                        Column.withManyTargets(of: column, at: position) { targets in
                            sink.combine(integer: UInt64(targets.count))
                            if property.isOrdered || isInKeyOrderOfOneEntity(targets) {
                                for target in targets { combineReference(target, into: &sink) }
                            } else {
                                for target in sortedCanonically(Array(targets)) {
                                    combineReference(target, into: &sink)
                                }
                            }
                        }
                    case .absent:
                        sink.combine(byte: 0xA0)
                        sink.combine(AttributeValue.null)
                    case let tag:
                        sink.combine(byte: 0xA0)
                        StoreState.combineDigest(of: column, tag: tag, at: position, into: &sink)
                    }
                }
            }
        }
    }
}
