import LogFormat

extension StoreState {
    /// The canonical digest of the live state (see ``StateDigest``): the one digest of the engine, so the library's
    /// (``ModelContainer/stateDigest()``), the compaction check's and `egctl replay`'s agree by construction.
    ///
    /// Objects are visited in (entity name, key) order, properties in name order; unordered to-many targets are
    /// sorted by (store UUID, entity name, key); references name stores by UUID and entities by name. Transient
    /// attributes are not part of the state.
    func digest(model: ObjectModel) -> StateDigest {
        digest(model: model, stoppingWhen: { false })!
    }

    /// The digest as ``digest(model:)`` computes it, or `nil` once `isCancelled` returns `true` (asked before each
    /// chunk of objects is hashed): a compaction that its store's close cancels stops its digest too.
    func digest(model: ObjectModel, stoppingWhen isCancelled: () -> Bool) -> StateDigest? {
        var hasher = DigestHasher()
        hasher.combine(integer: UInt64(objectCount))
        for entityIndex in Self.digestOrder(of: model) {
            combineDigest(ofEntity: entityIndex, model: model, into: &hasher, stoppingWhen: isCancelled)
            if isCancelled() { return nil }
        }
        return StateDigest(value: hasher.state)
    }

    /// The entities' indices in the order the digest visits them (by name).
    static func digestOrder(of model: ObjectModel) -> [Int] {
        model.entities.indices.sorted { model.entities[$0].name < model.entities[$1].name }
    }

    /// Adds the live objects of one entity to `hasher` as ``digest(model:)`` does: a digest is the live object
    /// count, then this for each entity in ``digestOrder(of:)``. A caller that holds the state in parts (a
    /// live-state migration's windows, each a key range of entities in that order) continues one hasher across them.
    /// It stops, the hasher's state then meaningless, once `isCancelled` returns `true` (asked before each chunk).
    func combineDigest(
        ofEntity entityIndex: Int, model: ObjectModel, into hasher: inout DigestHasher,
        stoppingWhen isCancelled: () -> Bool = { false }
    ) {
        let names = model.entities.map(\.name)
        // The table of foreign stores, read here once: the helpers below do not capture the whole state (a copy of
        // it per call showed up in profiles).
        let foreignStores = self.foreignStores
        func storeUUID(of reference: ObjectReference) -> LogUUID? {
            let index = Int(reference.storeIndex)
            guard index > 0, index <= foreignStores.count else { return nil }
            return foreignStores[index - 1]
        }
        func entityName(_ index: UInt32) -> String { Int(index) < names.count ? names[Int(index)] : "#\(index)" }
        // The words of every name the digest hashes per object or per reference (the entities', then this entity's
        // properties'), computed once into one buffer: hashing them is hashing the names, without a string read per
        // value (`combine(string:)` per property of every object and per target of every list was a tenth of
        // `egctl replay --summary`'s time).
        var nameWordList: [UInt64] = []
        var entityNameWords: [Range<Int>] = []
        for name in names {
            let start = nameWordList.count
            nameWordList += DigestHasher.words(of: name)
            entityNameWords.append(start..<nameWordList.count)
        }
        let entity = model.entities[entityIndex]
        // Once per entity: its persistent properties in name order, with their orderedness.
        let plan = entity.properties.indices.filter { entity.isPersistentProperty[$0] }
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
        // The words in a buffer of their own, read without an array access (a retain and a release) per name.
        let nameWordBuffer = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: nameWordList.count)
        _ = nameWordBuffer.initialize(from: nameWordList)
        defer { nameWordBuffer.deallocate() }
        func nameWords(_ range: Range<Int>) -> UnsafeBufferPointer<UInt64> {
            UnsafeBufferPointer(rebasing: nameWordBuffer[range])
        }
        // Read once: `.zero` per reference called its global's accessor (every object's own reference included).
        let noStore = LogUUID.zero
        func combine(_ reference: ObjectReference, into hasher: inout DigestHasher) {
            let store = storeUUID(of: reference) ?? noStore
            hasher.combine(integer: store.high)
            hasher.combine(integer: store.low)
            if Int(reference.entityIndex) < entityNameWords.count {
                hasher.combine(words: nameWords(entityNameWords[Int(reference.entityIndex)]))
            } else {
                hasher.combine(string: entityName(reference.entityIndex))
            }
            hasher.combine(integer: reference.key)
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
        // Key order from (key, slot) pairs: each object is read from its chunk when it is hashed, never all of an
        // entity's rows at once (they would be a second copy of the state's largest entity).
        let table = tables[entityIndex]
        var order: [(key: UInt64, slot: Int)] = []
        order.reserveCapacity(table.count)
        table.forEachLiveSlot { chunk, position, slot in order.append((chunk.keys[position], slot)) }
        if !order.indices.dropFirst().allSatisfy({ order[$0 - 1].key < order[$0].key }) {
            order.sort { $0.key < $1.key }
        }
        // Values are read from the columns where they are stored: attributes are hashed from their storage without
        // building a row, a value or a string (the same words as hashing the decoded value; see `combineDigest`).
        var chunkIndex = -1
        var chunk = ColumnChunk.unloaded
        for (_, slot) in order {
            if slot / ColumnChunk.slotCapacity != chunkIndex {
                if isCancelled() { return }
                chunkIndex = slot / ColumnChunk.slotCapacity
                chunk = table.chunk(at: chunkIndex)
            }
            let position = slot % ColumnChunk.slotCapacity
            combine(ObjectReference(entityIndex: UInt32(entityIndex), key: chunk.keys[position]), into: &hasher)
            let valueCount = min(Int(chunk.valueCounts[position]), chunk.columns.count)
            // Columns are borrowed through a pointer: `chunk.columns[i]` (and an unsafe buffer's subscript) copied
            // the whole column (a retain and a release of each of its storages) for every value.
            chunk.columns.withUnsafeBufferPointer { buffer in
                let columns = buffer.baseAddress  // nil only without columns, when `valueCount` is 0
                for property in plan {
                    hasher.combine(words: nameWords(property.nameWords))
                    guard property.index < valueCount, let column = columns.map({ $0 + property.index }) else {
                        hasher.combine(byte: 0xA0)
                        hasher.combine(AttributeValue.null)
                        continue
                    }
                    // Every read goes through the column's address: a column read as a value (a method called on
                    // `columns[i]`, or the column passed on) was copied whole, a retain and a release of each of its
                    // storages per value — most of the digest's time in h46's profile of compact-1m.
                    switch Column.tag(of: column, at: position) {
                    case .toOneNil:
                        hasher.combine(byte: 0xA1)
                        hasher.combine(byte: 0)
                    case .toOne:
                        hasher.combine(byte: 0xA1)
                        combine(Column.toOneTarget(of: column, at: position), into: &hasher)
                    case .toMany:
                        hasher.combine(byte: 0xA2)
                        Column.withManyTargets(of: column, at: position) { targets in
                            hasher.combine(integer: UInt64(targets.count))
                            if property.isOrdered || isInKeyOrderOfOneEntity(targets) {
                                for target in targets { combine(target, into: &hasher) }
                            } else {
                                for target in sortedCanonically(Array(targets)) { combine(target, into: &hasher) }
                            }
                        }
                    case .absent:
                        hasher.combine(byte: 0xA0)
                        hasher.combine(AttributeValue.null)
                    case let tag:
                        hasher.combine(byte: 0xA0)
                        Self.combineDigest(of: column, tag: tag, at: position, into: &hasher)
                    }
                }
            }
        }
    }

    /// Adds the attribute value in a slot of a column to `hasher` exactly as `DigestHasher.combine(_:)` adds the
    /// decoded ``AttributeValue``: fixed-width values from their bit pattern, binaries and ASCII text from the
    /// arena's bytes (the words a string's UTF-8 gives); other text (whose bytes decoding would repair if they were
    /// not UTF-8) and the rare values are decoded first.
    @inline(__always)
    static func combineDigest(
        of column: UnsafePointer<Column>, tag: ValueTag, at slot: Int, into hasher: inout DigestHasher
    ) {
        if tag.isFixedWidth {
            hasher.combine(fixedWidth: tag, column.pointee.words[slot])
            return
        }
        guard tag.isBytes else {
            hasher.combine(Column.attributeValueUnlessRelationship(of: column, at: slot) ?? .null)
            return
        }
        // An arena whose every byte is ASCII (the usual one) answers for all its values: none is scanned again.
        let arenaIsASCII = column.pointee.arena.isASCII
        Column.withArenaBytes(of: column, at: slot) { bytes in
            if tag == .binary || tag == .transformable || arenaIsASCII || ByteArena.isASCII(bytes) {
                hasher.combine(byteValue: tag, bytes)
            } else {
                hasher.combine(AttributeValue(bytes: tag, bytes))
            }
        }
    }
}
