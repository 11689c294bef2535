import Foundation
import LogFormat
import Synchronization
import TestSupport
import Testing

@testable import EventGraph

/// An entity with indexed attributes of several types.
final class Reading: ManagedObject {
    @Attribute(.indexed) var sensor: String = ""
    @Attribute(.indexed) var level: Int64 = 0
    @Attribute(.indexed) var score: Double? = nil
    @Attribute var note: String = ""
    /// A computed property that reads an indexed attribute: predicates on it must not be taken for `level`.
    var doubledLevel: Int64 { level * 2 }
}

enum IndexModels {
    static let readings = try! ObjectModel(name: "Readings", version: "1", types: [Reading.self])
}

@Suite("Attribute indexes")
struct IndexTests {
    private func insertReadings(_ context: ObjectContext, count: Int) {
        for index in 0..<count {
            let reading = Reading()
            context.insert(reading)
            reading.level = Int64(index)
            reading.sensor = "sensor-\(index % 50)"
            reading.score = index % 7 == 0 ? nil : Double(index % 100) / 4
            reading.note = "reading \(index)"
        }
    }

    @Test func equalityAndRangesExamineOnlyMatchingRows() throws {
        let container = try ModelContainer(inMemoryWith: IndexModels.readings)
        let context = container.newBackgroundContext()
        insertReadings(context, count: 5000)
        try context.save()

        let one = try context.fetch(FetchDescriptor<Reading>(filter: .equal("level", .int64(1234))))
        #expect(one.map(\.level) == [1234])
        #expect(context.lastFetchStatistics.usedIndex)
        #expect(context.lastFetchStatistics.rowsExamined == 1)

        let range = try context.fetch(FetchDescriptor<Reading>(filter: .between("level", .int64(100), .int64(199))))
        #expect(range.map(\.level) == Array(100...199))
        #expect(context.lastFetchStatistics.rowsExamined == 100)

        let sensor = try context.fetch(
            FetchDescriptor<Reading>(
                filter: .and([.equal("sensor", .string("sensor-7")), .compare("level", .less, .int64(1000))])))
        #expect(sensor.count == 20)
        #expect(context.lastFetchStatistics.rowsExamined <= 100)

        let typed = try context.fetch(
            FetchDescriptor<Reading>(predicate: #Predicate { $0.level >= 4990 && $0.level < 4995 }))
        #expect(typed.map(\.level) == [4990, 4991, 4992, 4993, 4994])
        #expect(context.lastFetchStatistics.usedIndex)
        #expect(context.lastFetchStatistics.rowsExamined == 5)

        let reversed = try context.fetch(FetchDescriptor<Reading>(predicate: #Predicate { 10 > $0.level }))
        #expect(reversed.count == 10 && context.lastFetchStatistics.rowsExamined == 10)

        // A predicate the translator does not understand still answers correctly, from a full scan.
        let computed = try context.fetch(FetchDescriptor<Reading>(predicate: #Predicate { $0.note.count == 11 }))
        #expect(computed.count == 900)
        #expect(!context.lastFetchStatistics.usedIndex)
        let doubled = try context.fetch(FetchDescriptor<Reading>(predicate: #Predicate { $0.doubledLevel == 20 }))
        #expect(doubled.map(\.level) == [10])
        #expect(!context.lastFetchStatistics.usedIndex)
    }

    @Test("an attribute index is passed over for ranges that hold more than a quarter of the objects")
    func broadRangesScanTheColumns() throws {
        let container = try ModelContainer(inMemoryWith: IndexModels.readings)
        let context = container.newBackgroundContext()
        insertReadings(context, count: 5000)
        try context.save()
        // 1,250 objects is the limit (a quarter of 5,000): up to it the index chooses the rows.
        let narrow = try context.fetch(FetchDescriptor<Reading>(filter: .compare("level", .less, .int64(1250))))
        #expect(narrow.count == 1250)
        #expect(context.lastFetchStatistics.usedIndex)
        #expect(context.lastFetchStatistics.rowsExamined == 1250)
        // Past it the store scans the column instead; the context examines only the rows that scan hands over.
        let broad = try context.fetch(FetchDescriptor<Reading>(filter: .compare("level", .less, .int64(1251))))
        #expect(broad.map(\.level).sorted() == Array(0..<1251))
        #expect(!context.lastFetchStatistics.usedIndex)
        #expect(context.lastFetchStatistics.rowsExamined == 1251)
    }

    @Test func resultsIncludeUnsavedChanges() throws {
        let container = try ModelContainer(inMemoryWith: IndexModels.readings)
        let context = container.newBackgroundContext()
        insertReadings(context, count: 1000)
        try context.save()
        let all = try context.fetch(FetchDescriptor<Reading>())
        all[10].level = 5000
        context.delete(all[11])
        let fresh = Reading()
        context.insert(fresh)
        fresh.level = 5001
        let found = try context.fetch(
            FetchDescriptor<Reading>(predicate: #Predicate { $0.level >= 5000 || $0.level == 11 }))
        #expect(Set(found.map(\.level)) == [5000, 5001])
        let ranged = try context.fetch(FetchDescriptor<Reading>(predicate: #Predicate { $0.level >= 5000 }))
        #expect(ranged.map(\.level) == [5000, 5001])
        #expect(context.lastFetchStatistics.usedIndex)
        let gone = try context.fetch(FetchDescriptor<Reading>(filter: .between("level", .int64(9), .int64(12))))
        #expect(gone.map(\.level) == [9, 12])
    }

    @Test func indexedFetchesEqualFullScansOnRandomData() throws {
        let seed = TestSeed.make()
        var random = SeededGenerator(seed: seed)
        let container = try ModelContainer(inMemoryWith: IndexModels.readings)
        let context = container.newBackgroundContext()
        for round in 0..<4 {
            for _ in 0..<500 {
                let reading = Reading()
                context.insert(reading)
                reading.level = Int64.random(in: -50...150, using: &random)
                reading.sensor = "s\(Int.random(in: 0..<30, using: &random))"
                reading.score = Bool.random(using: &random) ? nil : Double(Int.random(in: 0..<40, using: &random)) / 2
            }
            let all = try context.fetch(FetchDescriptor<Reading>())
            for object in all where Int.random(in: 0..<10, using: &random) == 0 {
                if Bool.random(using: &random) {
                    context.delete(object)
                } else {
                    object.level = Int64.random(in: -50...150, using: &random)
                }
            }
            if round % 2 == 0 { try context.save() }
            for _ in 0..<60 {
                let a = Int64.random(in: -60...160, using: &random)
                let b = Int64.random(in: -60...160, using: &random)
                let s = "s\(Int.random(in: 0..<30, using: &random))"
                let x = Double(Int.random(in: 0..<40, using: &random)) / 2
                let (filter, expected): (FetchFilter, (Reading) -> Bool) =
                    switch Int.random(in: 0..<7, using: &random) {
                    case 0: (.equal("level", .int64(a)), { $0.level == a })
                    case 1: (.compare("level", .less, .int64(a)), { $0.level < a })
                    case 2: (.compare("level", .greaterOrEqual, .int64(a)), { $0.level >= a })
                    case 3:
                        (
                            .between("level", .int64(min(a, b)), .int64(max(a, b))),
                            { (min(a, b)...max(a, b)).contains($0.level) }
                        )
                    case 4:
                        (
                            .and([.equal("sensor", .string(s)), .compare("level", .greater, .int64(a))]),
                            { $0.sensor == s && $0.level > a }
                        )
                    case 5: (.compare("score", .lessOrEqual, .double(x)), { ($0.score ?? -.infinity) <= x })
                    default: (.compare("sensor", .greater, .string(s)), { $0.sensor > s })
                    }
                let indexed = try context.fetch(FetchDescriptor<Reading>(filter: filter))
                let scanned = try context.fetch(FetchDescriptor<Reading>()).filter(expected)
                let indexedIDs = indexed.map(ObjectIdentifier.init)
                let scannedIDs = scanned.map(ObjectIdentifier.init)
                #expect(indexedIDs == scannedIDs, "seed \(seed): \(filter)")
                let predicate = #Predicate<Reading> { $0.level > a && $0.level <= b }
                let typed = try context.fetch(FetchDescriptor<Reading>(predicate: predicate))
                let expectedTyped = try context.fetch(FetchDescriptor<Reading>()).filter {
                    $0.level > a && $0.level <= b
                }
                let typedIDs = typed.map(ObjectIdentifier.init)
                let expectedIDs = expectedTyped.map(ObjectIdentifier.init)
                #expect(
                    typedIDs == expectedIDs,
                    "seed \(seed): \(a) < level <= \(b)")
            }
        }
    }

    @Test func indexesSurviveUpdatesDeletesReopenAndCompaction() throws {
        let directory = TemporaryDirectory()
        func check(_ container: ModelContainer, _ label: String) throws {
            let rebuilt = container.store.state.withLock { state -> Bool in
                var copy = state
                copy.rebuildIndexes()
                return zip(copy.indexes[0], state.indexes[0]).allSatisfy { pair in
                    pair.0.entries.map(\.key) == pair.1.entries.map(\.key)
                        && pair.0.entries.map(\.value) == pair.1.entries.map(\.value)
                }
            }
            #expect(rebuilt, "\(label): the maintained indexes equal ones rebuilt from the rows")
            let context = container.newBackgroundContext()
            let levels = try context.fetch(FetchDescriptor<Reading>(filter: .between("level", .int64(0), .int64(99))))
                .map(\.level)
            let expectedLevels: [Int64] = (0..<100).filter { $0 % 3 != 0 }
            #expect(levels == expectedLevels, "\(label)")
            let moved = try context.fetch(
                FetchDescriptor<Reading>(filter: .compare("level", .greaterOrEqual, .int64(10_000))))
            #expect(moved.count == 100, "\(label)")
            #expect(context.lastFetchStatistics.rowsExamined == 100, "\(label)")
        }
        do {
            let container = try ModelContainer(path: directory.file(), model: IndexModels.readings)
            let context = container.newBackgroundContext()
            insertReadings(context, count: 3000)
            try context.save()
            let all = try context.fetch(FetchDescriptor<Reading>())
            for reading in all where reading.level % 3 == 0 && reading.level < 1000 { context.delete(reading) }
            try context.save()
            for reading in try context.fetch(
                FetchDescriptor<Reading>(filter: .between("level", .int64(2000), .int64(2099))))
            {
                reading.level += 8000
            }
            try context.save()
            try check(container, "after saves")
            try container.close()
        }
        do {
            let container = try ModelContainer(path: directory.file(), model: IndexModels.readings)
            try check(container, "after reopen")
            try container.compact()
            try check(container, "after compaction")
            try container.close()
        }
        let container = try ModelContainer(path: directory.file(), model: IndexModels.readings)
        try check(container, "after reopening the compacted log")
        try container.close()
    }

    @Test("range lookups agree with a dictionary through inserts, removals, splits and rebuilds")
    func rangeLookupsFollowChanges() {
        var index = AttributeIndex(propertyIndex: 0)
        var random = SeededGenerator(seed: TestSeed.make())
        var reference: [UInt64: Int64] = [:]
        var nextKey: UInt64 = 1
        for round in 0..<60 {
            // Small batches go entry by entry (splits, removals of a chunk's last entry, emptied chunks); large ones
            // rebuild the index.
            let batch = round % 10 == 9 ? 2_000 : Int.random(in: 1...300, using: &random)
            var removals: [AttributeIndex.Entry] = []
            var insertions: [AttributeIndex.Entry] = []
            for _ in 0..<batch {
                if !reference.isEmpty, Int.random(in: 0..<3, using: &random) == 0 {
                    let key = reference.keys.randomElement(using: &random)!
                    if removals.contains(where: { $0.key == key }) { continue }
                    removals.append(.init(value: .int64(reference[key]!), key: key))
                } else {
                    let value = Int64.random(in: 0..<500, using: &random)
                    insertions.append(.init(value: .int64(value), key: nextKey))
                    nextKey += 1
                }
            }
            index.apply(removing: removals, inserting: insertions)
            for entry in removals { reference[entry.key] = nil }
            for entry in insertions { if case .int64(let value) = entry.value { reference[entry.key] = value } }
            #expect(index.count == reference.count, "round \(round)")
            #expect(index.lastEntriesMatchChunks, "round \(round)")
            for _ in 0..<5 {
                let lower = Int64.random(in: -5..<505, using: &random)
                let upper = lower + Int64.random(in: 0..<40, using: &random)
                let found = index.keys(
                    in: IndexRange(
                        lower: .init(value: .int64(lower), isInclusive: true),
                        upper: .init(value: .int64(upper), isInclusive: false)),
                    limit: .max)
                #expect(Set(found ?? []) == Set(reference.filter { (lower..<upper).contains($0.value) }.keys))
                #expect(found?.count == reference.values.filter { (lower..<upper).contains($0) }.count)
            }
        }
    }

    @Test func chunkedIndexStaysSorted() {
        var index = AttributeIndex(propertyIndex: 0)
        var random = SeededGenerator(seed: 42)
        var reference: [UInt64: Int64] = [:]
        for key in UInt64(1)...5000 {
            let value = Int64.random(in: 0..<300, using: &random)
            index.insert(.init(value: .int64(value), key: key))
            reference[key] = value
        }
        for key in UInt64(1)...5000 where key % 4 == 0 {
            index.remove(.init(value: .int64(reference[key]!), key: key))
            reference[key] = nil
        }
        let entries = index.entries
        #expect(entries.count == reference.count && index.count == reference.count)
        #expect(zip(entries, entries.dropFirst()).allSatisfy { AttributeIndex.precedes($0, $1) })
        #expect(index.lastEntriesMatchChunks)
        let keys = index.keys(
            in: IndexRange(
                lower: .init(value: .int64(10), isInclusive: true), upper: .init(value: .int64(20), isInclusive: false)),
            limit: .max)
        #expect(Set(keys ?? []) == Set(reference.filter { (10..<20).contains($0.value) }.keys))
    }
}
