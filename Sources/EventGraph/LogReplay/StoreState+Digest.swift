import LogFormat

extension StoreState {
    /// The canonical digest of the live state (see ``StateDigest``): the one digest of the engine, so the library's
    /// (``ModelContainer/stateDigest()``), the compaction check's and `egctl replay`'s agree by construction.
    ///
    /// Objects are visited in (entity name, key) order, properties in name order; unordered to-many targets are
    /// sorted by (store UUID, entity name, key); references name stores by UUID and entities by name. Transient
    /// attributes are not part of the state.
    func digest(model: ObjectModel) -> StateDigest {
        var hasher = DigestHasher()
        hasher.combine(integer: UInt64(objectCount))
        for entityIndex in Self.digestOrder(of: model) {
            combineDigest(ofEntity: entityIndex, model: model, into: &hasher)
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
    func combineDigest(ofEntity entityIndex: Int, model: ObjectModel, into hasher: inout DigestHasher) {
        let names = model.entities.map(\.name)
        func entityName(_ index: UInt32) -> String { Int(index) < names.count ? names[Int(index)] : "#\(index)" }
        func combine(_ reference: ObjectReference, into hasher: inout DigestHasher) {
            let store = storeUUID(of: reference) ?? .zero
            hasher.combine(integer: store.high)
            hasher.combine(integer: store.low)
            hasher.combine(string: entityName(reference.entityIndex))
            hasher.combine(integer: reference.key)
        }
        func sortedCanonically(_ targets: [ObjectReference]) -> [ObjectReference] {
            // The usual list is already in that order: targets of this store, of one entity, appended as they were
            // created (a tag's list of posts). Checking it is one pass; sorting it was most of a digest's time.
            if let first = targets.first, first.storeIndex == 0,
                targets.indices.dropFirst().allSatisfy({ index in
                    targets[index].storeIndex == 0 && targets[index].entityIndex == first.entityIndex
                        && targets[index - 1].key < targets[index].key
                })
            {
                return targets
            }
            return targets.sorted { a, b in
                let (sa, sb) = (storeUUID(of: a) ?? .zero, storeUUID(of: b) ?? .zero)
                if sa != sb { return sa < sb }
                if a.entityIndex != b.entityIndex { return entityName(a.entityIndex) < entityName(b.entityIndex) }
                return a.key < b.key
            }
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
        // Key order from (key, slot) pairs: each row is built when it is hashed, never all of an entity's at
        // once (they would be a second copy of the state's largest entity).
        let table = tables[entityIndex]
        var order: [(key: UInt64, slot: Int)] = []
        order.reserveCapacity(table.count)
        table.forEachLiveSlot { chunk, position, slot in order.append((chunk.keys[position], slot)) }
        if !order.indices.dropFirst().allSatisfy({ order[$0 - 1].key < order[$0].key }) {
            order.sort { $0.key < $1.key }
        }
        // Values are read from the columns (strings and binaries hashed from their bytes), not from a row built
        // per object: same digest, without a `String` per value.
        var chunkIndex = -1
        var chunk = ColumnChunk.unloaded
        for (_, slot) in order {
            if slot / ColumnChunk.slotCapacity != chunkIndex {
                chunkIndex = slot / ColumnChunk.slotCapacity
                chunk = table.chunk(at: chunkIndex)
            }
            let position = slot % ColumnChunk.slotCapacity
            let valueCount = Int(chunk.valueCounts[position])
            combine(ObjectReference(entityIndex: UInt32(entityIndex), key: chunk.keys[position]), into: &hasher)
            for property in plan {
                hasher.combine(string: property.name)
                precondition(property.index < valueCount, "a row of \(entity.name) lacks property #\(property.index)")
                let isBytes = chunk.columns[property.index].withByteValue(at: position) { tag, bytes in
                    hasher.combine(byte: 0xA0)
                    hasher.combine(byteValue: tag, bytes)
                    return true
                }
                if isBytes == true { continue }
                switch chunk.columns[property.index].value(at: position) ?? .attribute(.null) {
                case .attribute(let attribute):
                    hasher.combine(byte: 0xA0)
                    hasher.combine(attribute)
                case .toOne(let target):
                    hasher.combine(byte: 0xA1)
                    if let target { combine(target, into: &hasher) } else { hasher.combine(byte: 0) }
                case .toMany(let targets):
                    hasher.combine(byte: 0xA2)
                    hasher.combine(integer: UInt64(targets.count))
                    for target in property.isOrdered ? targets : sortedCanonically(targets) {
                        combine(target, into: &hasher)
                    }
                }
            }
        }
    }
}
