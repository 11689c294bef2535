import LogFormat

/// The digest's words for the live objects of one entity (``StoreState/combineDigest(ofEntity:model:into:helperThread:stoppingWhen:)``),
/// made for any run of them in key order into any ``DigestWordSink``: the hasher itself, or a word list a helper
/// thread makes ahead of it (``DigestBatches``). Its one definition of an object's words serves both, so the words
/// hashed are the same whichever thread made them.
///
/// It holds what the words are made from, read-only once made: the entity's table (a version of the state, never
/// modified: chunks still on disk are loaded through their own lock), the key order of its live objects, the property
/// plan and the words of every name hashed per object or per reference.
final class EntityDigestWords: @unchecked Sendable {
    // @unchecked Sendable: every stored property is a `let` set in `init`, and `nameWordBuffer`, the one that is not
    // Sendable, is only read after `init` and freed in `deinit`, when no thread can read it any more.
    private let table: EntityColumns
    private let entityIndex: Int
    private let names: [String]
    /// The table of foreign stores, read once: the helpers below do not capture the whole state (a copy of it per
    /// call showed up in profiles).
    private let foreignStores: [LogUUID]
    /// The live objects' (key, slot) pairs in key order: each object is read from its chunk when it is hashed, never
    /// all of an entity's rows at once (they would be a second copy of the state's largest entity).
    private let order: [(key: UInt64, slot: Int)]
    /// The persistent properties in name order, with their orderedness and the range of their name's words.
    private let plan: [(nameWords: Range<Int>, index: Int, isOrdered: Bool)]
    private let entityNameWords: [Range<Int>]
    /// The words of every name the digest hashes per object or per reference (the entities', then this entity's
    /// properties'), computed once: hashing them is hashing the names, without a string read per value
    /// (`combine(string:)` per property of every object and per target of every list was a tenth of `egctl replay
    /// --summary`'s time). In a buffer of their own, read without an array access (a retain and a release) per name.
    private let nameWordBuffer: UnsafeMutableBufferPointer<UInt64>
    /// Read once: `.zero` per reference called its global's accessor (every object's own reference included).
    private let noStore = LogUUID.zero

    /// The number of live objects, the indices of ``combine(objects:into:stoppingWhen:)``.
    var objectCount: Int { order.count }

    init(state: StoreState, entityIndex: Int, model: ObjectModel) {
        let names = model.entities.map(\.name)
        var nameWordList: [UInt64] = []
        var entityNameWords: [Range<Int>] = []
        for name in names {
            let start = nameWordList.count
            nameWordList += DigestHasher.words(of: name)
            entityNameWords.append(start..<nameWordList.count)
        }
        let entity = model.entities[entityIndex]
        // Once per entity: its persistent properties in name order, with their orderedness.
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
        nameWordBuffer = .allocate(capacity: nameWordList.count)
        _ = nameWordBuffer.initialize(from: nameWordList)
        let table = state.tables[entityIndex]
        var order: [(key: UInt64, slot: Int)] = []
        order.reserveCapacity(table.count)
        table.forEachLiveSlot { chunk, position, slot in order.append((chunk.keys[position], slot)) }
        if !order.indices.dropFirst().allSatisfy({ order[$0 - 1].key < order[$0].key }) {
            order.sort { $0.key < $1.key }
        }
        self.order = order
        self.table = table
        self.names = names
        self.entityNameWords = entityNameWords
        self.entityIndex = entityIndex
        self.foreignStores = state.foreignStores
    }

    deinit { nameWordBuffer.deallocate() }

    /// Makes the words of the objects at `objects` (indices into the key order) into `sink`, one object after
    /// another; `false` when it stopped: `isCancelled` returned `true` (asked before each chunk) or the sink takes no
    /// more (``DigestWordSink/wantsMore``, asked after each object, the last one included).
    func combine<Sink: DigestWordSink>(
        objects: Range<Int>, into sink: inout Sink, stoppingWhen isCancelled: () -> Bool = { false }
    ) -> Bool {
        var start = objects.lowerBound
        var targets: [ObjectReference] = []  // a to-many value's targets, copied out of its column (see below)
        while start < objects.upperBound {
            if isCancelled() { return false }
            // A run of objects that lie in one chunk: its columns are borrowed once for the run, not per object (a
            // closure call per object retained and released what it captured).
            let chunkIndex = order[start].slot / ColumnChunk.slotCapacity
            var end = start + 1
            while end < objects.upperBound, order[end].slot / ColumnChunk.slotCapacity == chunkIndex { end += 1 }
            let chunk = table.chunk(at: chunkIndex)
            let complete = chunk.columns.withUnsafeBufferPointer { buffer in
                for index in start..<end {
                    combineObject(
                        in: chunk, columns: buffer, at: order[index].slot % ColumnChunk.slotCapacity, into: &sink,
                        targets: &targets)
                    if !sink.wantsMore { return false }
                }
                return true
            }
            if !complete { return false }
            start = end
        }
        return true
    }

    /// One object's words: its reference, then each persistent property's name, tag and value. Values are read from
    /// the columns where they are stored: attributes are hashed from their storage without building a row, a value
    /// or a string (the same words as hashing the decoded value; see `StoreState.combineDigest(of:tag:at:into:)`).
    @inline(__always)
    private func combineObject<Sink: DigestWordSink>(
        in chunk: ColumnChunk, columns buffer: UnsafeBufferPointer<Column>, at position: Int, into sink: inout Sink,
        targets: inout [ObjectReference]
    ) {
        combine(ObjectReference(entityIndex: UInt32(entityIndex), key: chunk.keys[position]), into: &sink)
        let valueCount = min(Int(chunk.valueCounts[position]), buffer.count)
        // Columns are borrowed through a pointer: `chunk.columns[i]` (and an unsafe buffer's subscript) copied the
        // whole column (a retain and a release of each of its storages) for every value.
        let columns = buffer.baseAddress  // nil only without columns, when `valueCount` is 0
        for property in plan {
            sink.combine(words: nameWords(property.nameWords))
            guard property.index < valueCount, let column = columns.map({ $0 + property.index }) else {
                sink.combine(byte: 0xA0)
                sink.combine(AttributeValue.null)
                continue
            }
            // Every read goes through the column's address: a column read as a value (a method called on
            // `columns[i]`, or the column passed on) was copied whole, a retain and a release of each of its storages
            // per value — most of the digest's time in h46's profile of compact-1m.
            switch Column.tag(of: column, at: position) {
            case .toOneNil:
                sink.combine(byte: 0xA1)
                sink.combine(byte: 0)
            case .toOne:
                sink.combine(byte: 0xA1)
                combine(Column.toOneTarget(of: column, at: position), into: &sink)
            case .toMany:
                sink.combine(byte: 0xA2)
                // The targets are copied out and combined after the closure, which then captures nothing of `self`:
                // combined inside it, it retained and released `self` for every to-many value, and the helper
                // thread that makes the words of another range of the same entity (`DigestBatches`) did too, on the
                // same reference count (`egctl replay`'s profile: 4.6 % of its samples in those retains).
                targets.removeAll(keepingCapacity: true)
                Column.withManyTargets(of: column, at: position) { targets.append(contentsOf: $0) }
                sink.combine(integer: UInt64(targets.count))
                let isInOrder =
                    property.isOrdered || targets.withUnsafeBufferPointer(Self.isInKeyOrderOfOneEntity)
                if isInOrder {
                    for target in targets { combine(target, into: &sink) }
                } else {
                    for target in sortedCanonically(targets) { combine(target, into: &sink) }
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

    @inline(__always)
    private func nameWords(_ range: Range<Int>) -> UnsafeBufferPointer<UInt64> {
        UnsafeBufferPointer(rebasing: nameWordBuffer[range])
    }

    private func storeUUID(of reference: ObjectReference) -> LogUUID? {
        let index = Int(reference.storeIndex)
        guard index > 0, index <= foreignStores.count else { return nil }
        return foreignStores[index - 1]
    }

    private func entityName(_ index: UInt32) -> String { Int(index) < names.count ? names[Int(index)] : "#\(index)" }

    @inline(__always)
    private func combine<Sink: DigestWordSink>(_ reference: ObjectReference, into sink: inout Sink) {
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

    /// The usual list holds objects of one store and one entity, whose canonical order is key order, and is already
    /// in it (targets are appended as they are inserted): checked in one pass, not sorted.
    private static func isInKeyOrderOfOneEntity(_ targets: UnsafeBufferPointer<ObjectReference>) -> Bool {
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

    /// Unordered to-many targets in canonical order: (store UUID, entity name, key).
    private func sortedCanonically(_ targets: [ObjectReference]) -> [ObjectReference] {
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
}
