import Foundation
import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// A random value of any kind a column stores, relationships included.
private func randomValue(_ generator: inout SeededGenerator) -> PropertyValue {
    let words = ["", "a", "post", "é", "\r\n", "😀", "a longer title than fifteen bytes"]
    let word = words[Int(generator.next() % UInt64(words.count))]
    switch generator.next() % 16 {
    case 0: return .attribute(.null)
    case 1: return .attribute(.int16(Int16(truncatingIfNeeded: generator.next())))
    case 2: return .attribute(.int32(Int32(truncatingIfNeeded: generator.next())))
    case 3: return .attribute(.int64(Int64(bitPattern: generator.next())))
    // Finite numbers only: NaN equals nothing, so rows holding one would never compare equal.
    case 4: return .attribute(.double(Double(Int64(generator.next() % 2_000_000) - 1_000_000) / 8))
    case 5: return .attribute(.float(Float(Int64(generator.next() % 2_000) - 1_000) / 4))
    case 6: return .attribute(.bool(generator.next() % 2 == 0))
    case 7: return .attribute(.date(Double(Int64(generator.next() % 1_000_000))))
    case 8: return .attribute(.uuid(LogUUID(bytes: (0..<16).map { _ in UInt8(truncatingIfNeeded: generator.next()) })))
    case 9: return .attribute(.url("https://example.com/" + word))
    case 10: return .attribute(.decimal("1.5"))
    case 11: return .attribute(.binary(Array(word.utf8)))
    case 12: return .toOne(generator.next() % 3 == 0 ? nil : ObjectReference(entityIndex: 1, key: generator.next() % 9))
    case 13: return .toMany((0..<generator.next() % 4).map { ObjectReference(entityIndex: 2, key: $0) })
    default: return .attribute(.string(word + String(generator.next() % 100)))
    }
}

private func randomRow(_ generator: inout SeededGenerator, key: UInt64, version: UInt64) -> Row {
    // A row may have fewer properties than others (a later schema added some).
    let count = 3 + Int(generator.next() % 3)
    return Row(entityIndex: 0, key: key, version: version, values: (0..<count).map { _ in randomValue(&generator) })
}

/// Saves `count` samples, numbered by `int64`, each set up by `configure`.
private func insertSamples(
    _ count: Int, into container: ModelContainer, _ configure: (Sample, Int) -> Void = { _, _ in }
) throws {
    let context = container.newBackgroundContext()
    for index in 0..<count {
        let sample = Sample()
        context.insert(sample)
        sample.int64 = Int64(index)
        configure(sample, index)
    }
    try context.save()
}

@Suite("Handle rows read their chunk version")
struct RowHandleTests {
    @Test("a handle reads every value as the row built from the same slot, on random data")
    func handlesReadAsBuiltRows() {
        let seed = TestSeed.make()
        var generator = SeededGenerator(seed: seed)
        var table = EntityColumns(entityIndex: 0)
        var live: [UInt64] = []
        for version in UInt64(1)...6_000 {
            switch generator.next() % 6 {
            case 0 where !live.isEmpty:
                let position = Int(generator.next() % UInt64(live.count))
                table.remove(key: live.remove(at: position))
            case 1 where !live.isEmpty:
                let key = live[Int(generator.next() % UInt64(live.count))]
                table.put(randomRow(&generator, key: key, version: version))
            default:
                table.put(randomRow(&generator, key: version, version: version))
                live.append(version)
            }
        }
        var slots: [Int] = []
        table.forEachLiveSlot { _, _, slot in slots.append(slot) }
        #expect(slots.count == live.count, "seed \(seed)")
        for slot in slots {
            let built = table.row(atSlot: slot)
            let handle = table.rowHandle(atSlot: slot)
            #expect(handle.isHandle && !built.isHandle)
            #expect(handle.key == built.key && handle.version == built.version, "seed \(seed)")
            #expect(Array(handle.values) == Array(built.values), "slot \(slot), seed \(seed)")
            for index in built.values.indices {
                let expected: AttributeValue
                if case .attribute(let value) = built.values[index] { expected = value } else { expected = .null }
                #expect(handle.values.attributeValue(at: index) == expected, "slot \(slot), seed \(seed)")
                // The direct decode of a property read: the attribute, `nil` for a relationship.
                let attribute: AttributeValue?
                if case .attribute(let value) = built.values[index] { attribute = value } else { attribute = nil }
                #expect(handle.values.attributeValueUnlessRelationship(at: index) == attribute, "seed \(seed)")
                #expect(built.values.attributeValueUnlessRelationship(at: index) == attribute, "seed \(seed)")
            }
        }
        #expect(table.rows(atSlots: slots.reversed() + slots).map(\.key) == slots.map { table.row(atSlot: $0).key })
    }

    @Test("a handle keeps reading its version while later commits change, delete and compact the chunks")
    func handleKeepsItsVersion() throws {
        let seed = TestSeed.make()
        var generator = SeededGenerator(seed: seed)
        var table = EntityColumns(entityIndex: 0)
        for key in UInt64(1)...5_000 { table.put(randomRow(&generator, key: key, version: 1)) }
        let handles = try table.liveRowHandles()
        let expected = handles.map { Array($0.values) }
        // Change every object, then delete most (the deletes outnumber the live objects, so the chunks are rewritten).
        for key in UInt64(1)...5_000 { table.put(randomRow(&generator, key: key, version: 2)) }
        for key in UInt64(1)...4_000 { table.remove(key: key) }
        #expect(table.count == 1_000)
        for (handle, values) in zip(handles, expected) {
            #expect(handle.version == 1)
            #expect(Array(handle.values) == values, "key \(handle.key), seed \(seed)")
        }
    }
}

@Suite("Objects read their columns through handles")
struct ObjectHandleTests {
    private static func fill(_ container: ModelContainer, count: Int, seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        try insertSamples(count, into: container) { sample, index in
            sample.int32 = Int32(truncatingIfNeeded: generator.next() % 100)
            sample.double = Double(generator.next() % 1_000) / 8
            sample.string = "title \(generator.next() % 500) of sample number \(index)"
            sample.optionalString = generator.next() % 2 == 0 ? nil : "w\(generator.next() % 10)"
            sample.date = Date(timeIntervalSinceReferenceDate: Double(generator.next() % 10_000))
            sample.data = Data([UInt8(index & 0xFF), 1, 2])
        }
    }

    private struct Values: Equatable {
        var int64: Int64, int32: Int32, double: Double, string: String, optionalString: String?, date: Date
        var data: Data

        init(_ sample: Sample) {
            int64 = sample.int64
            int32 = sample.int32
            double = sample.double
            string = sample.string
            optionalString = sample.optionalString
            date = sample.date
            data = sample.data
        }
    }

    @Test("fetched objects hold handles and read the version they were fetched at across commits and compaction")
    func objectsKeepTheirVersion() throws {
        let seed = TestSeed.make()
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.samples)
        try Self.fill(container, count: 5_000, seed: seed)
        let reader = container.newBackgroundContext()
        let fetched = try reader.fetch(FetchDescriptor<Sample>())
        #expect(fetched.count == 5_000)
        #expect(fetched.allSatisfy { $0.row?.isHandle == true })
        // Read half now; the other half first reads after the commits below, from the same version.
        let early = fetched.prefix(2_500).map(Values.init)
        let writer = container.newBackgroundContext()
        for sample in try writer.fetch(FetchDescriptor<Sample>()) {
            if sample.int64 % 3 == 0 {
                writer.delete(sample)
            } else {
                sample.string = "changed \(sample.int64)"
                sample.int32 = -1
            }
        }
        try writer.save()
        _ = try container.compact()
        let late = fetched.suffix(2_500).map(Values.init)
        // A fresh context sees the commit; the reader's objects still read their version.
        let fresh = container.newBackgroundContext()
        let current = try fresh.fetch(FetchDescriptor<Sample>(sortBy: [SortDescriptor(\.int64)]))
        #expect(current.count == 5_000 - 1_667)
        #expect(current.allSatisfy { $0.string == "changed \($0.int64)" && $0.int32 == -1 })
        for (index, values) in (early + late).enumerated() {
            #expect(values.int64 == Int64(index))
            #expect(values.string.hasSuffix("of sample number \(index)"), "seed \(seed)")
            #expect(values.int32 != -1)
        }
        // Refreshing lets the objects read the store's current values.
        reader.refreshAllObjects()
        #expect(fetched[1].string == "changed 1")
        #expect(fetched[1].row?.isHandle == true)
        try container.close()
    }

    @Test("a property read decodes the same value as the row's property value, for every kind and random data")
    func propertyReadsEqualRowValues() throws {
        let seed = TestSeed.make()
        var generator = SeededGenerator(seed: seed)
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.samples)
        try insertSamples(2_000, into: container) { sample, index in
            let pick = generator.next()
            sample.int16 = Int16(truncatingIfNeeded: generator.next())
            sample.float = Float(Int(generator.next() % 1_000)) / 4
            sample.bool = pick % 2 == 0
            sample.string = pick % 3 == 0 ? "é\(index)" : "a title longer than fifteen bytes \(index)"
            sample.uuid = UUID()
            sample.url = URL(string: "https://example.com/\(index)")!
            sample.decimal = Decimal(index) / 8
            sample.optionalString = pick % 5 == 0 ? nil : "s\(pick % 7)"
            sample.optionalInt = pick % 4 == 0 ? nil : Int(pick % 100)
            sample.large = pick % 6 == 0 ? Data(repeating: UInt8(index & 0xFF), count: 100) : nil
            sample.point = pick % 3 == 0 ? nil : Point(x: Double(index), y: 1)
        }
        let context = container.newBackgroundContext()
        let entity = try #require(container.model.entity(for: Sample.self))
        for sample in try context.fetch(FetchDescriptor<Sample>()) {
            let row = try #require(sample.row)
            #expect(row.isHandle)
            for property in entity.properties.indices where entity.properties[property].attribute != nil {
                // What a read returned before: the row's `PropertyValue`, unwrapped.
                var expected: AttributeValue?
                if case .attribute(let value) = row.values[property] { expected = value }
                if case .blob? = expected { continue }  // read from the log either way
                #expect(sample.storedAttributeValue(at: property) == expected, "seed \(seed)")
            }
            #expect(!sample.isFault)
        }
        try container.close()
    }

    @Test("an object with unsaved changes reads them over its handle, and its save installs them")
    func changedObjectsReadTheirChanges() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.samples)
        try Self.fill(container, count: 100, seed: 7)
        let context = container.newBackgroundContext()
        let sample = try #require(try context.fetch(FetchDescriptor<Sample>(filter: .equal("int64", .int64(42)))).first)
        #expect(sample.row?.isHandle == true)
        let before = sample.string
        sample.string = "mine"
        #expect(sample.string == "mine")
        #expect(sample.int64 == 42)
        try context.save()
        let other = container.newBackgroundContext()
        let saved = try #require(try other.fetch(FetchDescriptor<Sample>(filter: .equal("int64", .int64(42)))).first)
        #expect(saved.string == "mine" && before != "mine")
        try container.close()
    }

    @Test("readers on several threads read consistent objects while a writer commits")
    func concurrentReadersAndWriter() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.samples)
        try insertSamples(2_000, into: container) { sample, index in sample.string = "v\(index)" }
        let failures = LockedValue(0)
        onThreads(4) { thread in
            if thread == 0 {
                // The writer keeps `string == "v\(int64)"` true in every commit.
                for round in 1...40 {
                    let context = container.newBackgroundContext()
                    let samples =
                        (try? context.fetch(FetchDescriptor<Sample>(filter: .compare("int64", .less, .int64(200)))))
                        ?? []
                    for sample in samples {
                        sample.int64 += 1_000 * Int64(round)
                        sample.string = "v\(sample.int64)"
                    }
                    if (try? context.save()) == nil { failures.withLock { $0 += 1 } }
                }
                return
            }
            for _ in 0..<10 {
                let context = container.newBackgroundContext()
                guard let samples = try? context.fetch(FetchDescriptor<Sample>()) else {
                    failures.withLock { $0 += 1 }
                    return
                }
                let broken = samples.filter { $0.string != "v\($0.int64)" }.count
                if broken > 0 || samples.count != 2_000 { failures.withLock { $0 += 1 } }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        try container.close()
    }
}

@Suite("#Predicate fetches run the column scans of the equivalent filters")
struct PredicateScanTests {
    @Test("the benchmark's predicate shapes translate completely and fetch what their filters fetch, on random data")
    func predicatesMatchFilters() throws {
        let seed = TestSeed.make()
        var generator = SeededGenerator(seed: seed)
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.samples)
        let words = ["alpha", "beta", "gamma", "delta", "é", "ab"]
        try insertSamples(3_000, into: container) { sample, _ in
            sample.int32 = Int32(generator.next() % 50)
            sample.date = Date(timeIntervalSinceReferenceDate: Double(generator.next() % 200))
            sample.string = (0..<3).map { _ in words[Int(generator.next() % UInt64(words.count))] }.joined(
                separator: " ")
        }
        let context = container.newBackgroundContext()
        let entity = try #require(container.model.entity(for: Sample.self))
        func keys(_ descriptor: FetchDescriptor<Sample>) throws -> [Int64] {
            try context.fetch(descriptor).map(\.int64).sorted()
        }
        func check(_ predicate: Predicate<Sample>, _ filter: FetchFilter, _ what: String) throws {
            let plan = try FetchPlan(
                FetchDescriptor<Sample>(predicate: predicate), entity: entity, model: container.model)
            #expect(plan.predicate == nil, "\(what) did not translate completely")
            let byPredicate = try keys(FetchDescriptor<Sample>(predicate: predicate))
            let byFilter = try keys(FetchDescriptor<Sample>(filter: filter))
            #expect(byPredicate == byFilter, "\(what), seed \(seed)")
        }
        for _ in 0..<10 {
            let word = words[Int(generator.next() % UInt64(words.count))]
            let date = Date(timeIntervalSinceReferenceDate: Double(generator.next() % 200))
            let upper = date.addingTimeInterval(Double(generator.next() % 40))
            let number = Int32(generator.next() % 50)
            try check(#Predicate { $0.string.contains(word) }, .compare("string", .contains, .string(word)), "contains")
            try check(
                #Predicate { $0.string.starts(with: word) }, .compare("string", .beginsWith, .string(word)), "prefix")
            try check(#Predicate { $0.string == word }, .equal("string", .string(word)), "string equality")
            try check(#Predicate { $0.date == date }, .equal("date", .date(date)), "date equality")
            try check(
                #Predicate { $0.date >= date && $0.date <= upper },
                .and([.compare("date", .greaterOrEqual, .date(date)), .compare("date", .lessOrEqual, .date(upper))]),
                "date range")
            try check(#Predicate { $0.int32 < number }, .compare("int32", .less, .int32(number)), "number range")
        }
        try container.close()
    }
}
