import LogFormat
import Testing

@testable import EventGraph

/// A column's references are held as their keys alone (8 bytes) while they name one store and entity, and in full
/// once two differ; every reader sees the same references either way.
@Suite("Column references: 8 bytes while they share a store and entity, in full once they do not")
struct ReferenceStorageTests {
    static func post(_ key: Int) -> ObjectReference { ObjectReference(entityIndex: 2, key: UInt64(key)) }

    /// Every way a column's references are read, for one slot: the value, and the in-place reads the digest and
    /// checkpoint encoding make.
    static func reads(_ column: Column, at slot: Int) -> (PropertyValue?, [ObjectReference]?) {
        withUnsafePointer(to: column) { pointer in
            switch Column.tag(of: pointer, at: slot) {
            case .toOne: (column.value(at: slot), [Column.toOneTarget(of: pointer, at: slot)])
            case .toMany: (column.value(at: slot), Column.withManyTargets(of: pointer, at: slot) { Array($0) })
            default: (column.value(at: slot), nil)
            }
        }
    }

    @Test("a chunk's to-one and short to-many references of one entity take 8 bytes each")
    func sharedReferencesTakeEightBytes() {
        let slots = ColumnChunk.slotCapacity
        var toOne = Column()
        var toMany = Column()
        for slot in 0..<slots {
            toOne.set(.toOne(Self.post(slot)), at: slot)
            toMany.set(.toMany([Self.post(slot), Self.post(slot + 1), Self.post(slot + 2)]), at: slot)
        }
        // Without growth slack: a tag a slot, then 8 bytes a reference (16 before), within shrinkToFit's eighth.
        toOne.shrinkToFit()
        toMany.shrinkToFit()
        #expect(toOne.heapByteCount <= slots * (1 + 8) * 9 / 8, "\(toOne.heapByteCount) bytes for \(slots) targets")
        // A span's start and count take 8 bytes a slot.
        let listBytes = slots * (1 + 8 + 3 * 8)
        #expect(toMany.heapByteCount <= listBytes * 9 / 8, "\(toMany.heapByteCount) bytes for \(3 * slots) targets")
        for slot in [0, 1, slots / 2, slots - 1] {
            #expect(Self.reads(toOne, at: slot).1 == [Self.post(slot)])
            #expect(toMany.value(at: slot) == .toMany([Self.post(slot), Self.post(slot + 1), Self.post(slot + 2)]))
        }
    }

    /// The references a mixed column is written with: a second entity, a second store, or both, from `slot` on.
    static let strangers: [(String, ObjectReference)] = [
        ("another entity", ObjectReference(entityIndex: 3, key: 77)),
        ("another store", ObjectReference(storeIndex: 1, entityIndex: 2, key: 78)),
        ("another store's entity", ObjectReference(storeIndex: 2, entityIndex: 9, key: 79)),
    ]

    @Test("a reference of another store or entity keeps every reference as it was", arguments: [0, 1, 5, 200])
    func strangerWidensTheStorage(at strangerSlot: Int) {
        for (name, stranger) in Self.strangers {
            var toOne = Column()
            var toMany = Column()
            var expectedOne: [Int: ObjectReference] = [:]
            var expectedMany: [Int: [ObjectReference]] = [:]
            // Slots 3 and 4 are written later than their neighbours (fillers first), slot 6 never.
            for slot in [0, 1, 2, 5, 7, 8, 3] + Array(9..<300) + [4] {
                let target = slot == strangerSlot ? stranger : Self.post(slot)
                toOne.set(.toOne(target), at: slot)
                expectedOne[slot] = target
                let list = slot % 3 == 0 ? [Self.post(slot), target] : [target]
                toMany.set(.toMany(list), at: slot)
                expectedMany[slot] = list
            }
            for slot in 0..<301 {
                let one = Self.reads(toOne, at: slot)
                let many = Self.reads(toMany, at: slot)
                #expect(one.0 == expectedOne[slot].map { .toOne($0) }, "\(name), slot \(slot)")
                #expect(one.1 == expectedOne[slot].map { [$0] }, "\(name), slot \(slot)")
                #expect(many.0 == expectedMany[slot].map { .toMany($0) }, "\(name), slot \(slot)")
                #expect(many.1 == expectedMany[slot], "\(name), slot \(slot)")
            }
        }
    }

    @Test("a column's references renumbered to another table of stores, shared and full alike")
    func renumbering() {
        let long = (0..<Column.largeListCount).map { Self.post($0) }
        for (name, stranger) in [("shared", Self.post(1))] + Self.strangers {
            var column = Column()
            column.set(.toMany([Self.post(0), stranger]), at: 0)
            column.set(.toMany([stranger]), at: 1)
            column.set(.toMany(long), at: 2)
            var toOne = Column()
            toOne.set(.toOne(Self.post(5)), at: 0)
            toOne.set(.toOne(stranger), at: 1)
            let table: [UInt32] = [4, 0, 6]
            func renumbered(_ reference: ObjectReference) -> ObjectReference {
                var reference = reference
                reference.storeIndex = table[Int(reference.storeIndex)]
                return reference
            }
            let many = column.renumberingStores(table)
            let one = toOne.renumberingStores(table)
            #expect(many.value(at: 0) == .toMany([renumbered(Self.post(0)), renumbered(stranger)]), "\(name)")
            #expect(many.value(at: 1) == .toMany([renumbered(stranger)]), "\(name)")
            #expect(many.value(at: 2) == .toMany(long.map(renumbered)), "\(name)")
            #expect(one.value(at: 0) == .toOne(renumbered(Self.post(5))), "\(name)")
            #expect(one.value(at: 1) == .toOne(renumbered(stranger)), "\(name)")
            // The original is unchanged (its storages are shared until the copy writes).
            #expect(column.value(at: 1) == .toMany([stranger]), "\(name)")
            #expect(toOne.value(at: 1) == .toOne(stranger), "\(name)")
        }
    }

    @Test("lists rewritten until their garbage is compacted, and edited in place, read back", arguments: [false, true])
    func rewrittenAndEditedLists(mixed: Bool) {
        var column = Column()
        var expected: [[ObjectReference]] = []
        for slot in 0..<10 {
            let last = mixed && slot == 4 ? Self.strangers[1].1 : Self.post(9)
            let list = [Self.post(slot), Self.post(slot + 100), last]
            column.set(.toMany(list), at: slot)
            expected.append(list)
        }
        // Each rewrite leaves its old span as garbage: past 1,024 targets the spans are compacted.
        for round in 0..<1_000 {
            let slot = round % 3
            let list = (0...(round % 4)).map { Self.post(1_000 + round + $0) }
            column.set(.toMany(list), at: slot)
            expected[slot] = list
            // The same list again writes nothing and reads the same.
            column.set(.toMany(list), at: slot)
        }
        column.editMany(at: 5) { list, _ in
            list.append(Self.post(5_000))
            return nil
        }
        expected[5].append(Self.post(5_000))
        for slot in 0..<10 {
            #expect(Self.reads(column, at: slot).0 == .toMany(expected[slot]), "slot \(slot)")
            #expect(Self.reads(column, at: slot).1 == expected[slot], "slot \(slot)")
        }
        #expect(column.manyTargets.count < 1_200, "\(column.manyTargets.count) targets kept: no compaction")
    }

    @Test("the chunk after a full one reserves references in the full one's layout")
    func reservationFollowsTheLayout() {
        for stranger in [nil, Self.strangers[0].1] {
            var full = ColumnChunk()
            for number in 0..<ColumnChunk.slotCapacity {
                let slot = full.appendSlot(key: UInt64(number + 1), version: 1, valueCount: 2)
                let target = number == 7 ? stranger ?? Self.post(number) : Self.post(number)
                full.set(.toOne(target), property: 0, at: slot)
                full.set(.toMany([Self.post(number), target]), property: 1, at: slot)
            }
            var next = ColumnChunk()
            next.reserveCapacity(like: full)
            let slot = next.appendSlot(key: 1, version: 1, valueCount: 2)
            next.set(.toOne(Self.post(1)), property: 0, at: slot)
            next.set(.toMany([Self.post(1), Self.post(2)]), property: 1, at: slot)
            let reserved = next.heapByteCount
            // The column's tags, span starts and counts take 9 bytes a slot; its references 2 a slot.
            let referenceBytes = 2 * ColumnChunk.slotCapacity * (stranger == nil ? 8 : 16)
            let bytes = next.columns[1].heapByteCount
            #expect(bytes >= referenceBytes, "\(bytes) bytes reserved")
            #expect(bytes < (referenceBytes + 9 * ColumnChunk.slotCapacity) * 9 / 8, "\(bytes) bytes reserved")
            // A stranger in the new chunk too fills the room reserved for full references without growing.
            if let stranger {
                let other = next.appendSlot(key: 2, version: 1, valueCount: 2)
                next.set(.toOne(stranger), property: 0, at: other)
                next.set(.toMany([stranger]), property: 1, at: other)
                #expect(next.heapByteCount == reserved)
                #expect(next.columns[0].value(at: other) == .toOne(stranger))
            }
            #expect(next.columns[0].value(at: slot) == .toOne(Self.post(1)))
            #expect(next.columns[1].value(at: slot) == .toMany([Self.post(1), Self.post(2)]))
        }
    }

    @Test("a reference storage read in place through its address reads as the storage does", arguments: [0, 1, 2])
    func referenceStorageReadInPlace(layout: Int) {
        // 0: nothing held yet, 1: keys of one store and entity (a filler among them), 2: full references.
        var storage = ReferenceStorage()
        if layout > 0 {
            var isReserved = false
            let list = (0..<40).map { ObjectReference(storeIndex: 1, entityIndex: 3, key: UInt64($0 * 7)) }
            list.withUnsafeBufferPointer { storage.append(contentsOf: $0, isReserved: &isReserved) }
            storage.store(ObjectReference(storeIndex: 1, entityIndex: 3, key: 9), at: 45)
        }
        if layout == 2 { storage.store(ObjectReference(entityIndex: 4, key: 5), at: 46) }
        let count = storage.count
        #expect(count == [0, 46, 47][layout])
        withUnsafePointer(to: storage) { pointer in
            for position in 0..<count {
                #expect(ReferenceStorage.reference(of: pointer, at: position) == storage[position])
            }
            for range in [0..<0, 0..<count, min(count, 3)..<min(count, 20), max(0, count - 5)..<count] {
                let inPlace = ReferenceStorage.withReferences(of: pointer, in: range) { Array($0) }
                #expect(inPlace == range.map { storage[$0] })
                #expect(inPlace == storage.withReferences(in: range) { Array($0) })
            }
        }
        if layout > 0 {
            #expect(storage[45] == ObjectReference(storeIndex: 1, entityIndex: 3, key: 9))
            #expect(storage[39] == ObjectReference(storeIndex: 1, entityIndex: 3, key: 273))
        }
    }
}
