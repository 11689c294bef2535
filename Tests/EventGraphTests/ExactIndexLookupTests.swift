import Foundation
import LogFormat
import Synchronization
import Testing

@testable import EventGraph

@Suite("Fetches an attribute index answers exactly")
struct ExactIndexLookupTests {
    private func container(readings count: Int) throws -> ModelContainer {
        let container = try ModelContainer(inMemoryWith: IndexModels.readings)
        let context = container.newBackgroundContext()
        for index in 0..<count {
            let reading = Reading()
            context.insert(reading)
            reading.level = Int64(index % 100)
            reading.sensor = "sensor-\(index % 7)"
            reading.note = "reading \(index)"
        }
        try context.save()
        return container
    }

    @Test("comparisons of one indexed attribute are not evaluated again on the rows the index finds")
    func comparisonsOfOneAttributeFilterNoRow() throws {
        let context = try container(readings: 1_000).newBackgroundContext()
        let day = Int64(42)
        let equal = try context.fetch(FetchDescriptor<Reading>(predicate: #Predicate { $0.level == day }))
        #expect(equal.count == 10 && equal.allSatisfy { $0.level == 42 })
        #expect(context.lastFetchStatistics.usedIndex)
        #expect(context.lastFetchStatistics.rowsExamined == 10)
        #expect(context.lastFetchStatistics.rowsFiltered == 0)

        let range = try context.fetch(FetchDescriptor<Reading>(filter: .between("level", .int64(10), .int64(12))))
        #expect(range.count == 30 && range.allSatisfy { (10...12).contains($0.level) })
        #expect(context.lastFetchStatistics.rowsFiltered == 0)
    }

    @Test("a filter with more than the index's comparisons is evaluated on every row the index finds")
    func otherConditionsAreStillEvaluated() throws {
        let context = try container(readings: 1_000).newBackgroundContext()
        let withNote = try context.fetch(
            FetchDescriptor<Reading>(
                filter: .and([.equal("level", .int64(42)), .compare("note", .contains, .string("942"))])))
        #expect(withNote.map(\.note) == ["reading 942"])
        #expect(context.lastFetchStatistics.rowsFiltered == 10)

        // Two indexed attributes: the index of one finds the rows, the other condition is evaluated on them.
        let twoIndexes = try context.fetch(
            FetchDescriptor<Reading>(
                filter: .and([.equal("level", .int64(42)), .equal("sensor", .string("sensor-0"))])))
        #expect(twoIndexes.allSatisfy { $0.level == 42 && $0.sensor == "sensor-0" })
        #expect(twoIndexes.count == (0..<1_000).filter { $0 % 100 == 42 && $0 % 7 == 0 }.count)
        #expect(context.lastFetchStatistics.rowsFiltered > 0)

        let either = try context.fetch(
            FetchDescriptor<Reading>(filter: .or([.equal("level", .int64(1)), .equal("level", .int64(2))])))
        #expect(either.count == 20)
        #expect(!context.lastFetchStatistics.usedIndex)
    }

    @Test("unsaved changes still decide whether a changed object is a result")
    func unsavedChangesStillCount() throws {
        let context = try container(readings: 1_000).newBackgroundContext()
        let seven = try context.fetch(FetchDescriptor<Reading>(filter: .equal("level", .int64(7))))
        let moved = seven[0]
        moved.level = 8
        let other = try context.fetch(FetchDescriptor<Reading>(filter: .equal("level", .int64(9))))[0]
        other.level = 7
        let found = try context.fetch(FetchDescriptor<Reading>(filter: .equal("level", .int64(7))))
        #expect(found.count == 10)
        #expect(found.allSatisfy { $0.level == 7 })
        #expect(!found.contains { $0 === moved } && found.contains { $0 === other })
    }

    @Test("an index lookup leaves out stored values that do not compare with the operand")
    func valuesOfOtherKindsAreLeftOut() {
        // A string where the model says date (a damaged or crafted log): the index orders it as equal to any date,
        // but no comparison with a date matches it.
        var index = AttributeIndex(propertyIndex: 0)
        index.apply(
            removing: [],
            inserting: [
                .init(value: .date(10), key: 1), .init(value: .string("ten"), key: 2), .init(value: .date(10), key: 3),
                .init(value: .null, key: 4), .init(value: .date(20), key: 5),
            ])
        let equal = IndexRange.Bound(value: .date(10), isInclusive: true)
        #expect(index.keys(in: IndexRange(lower: equal, upper: equal), limit: .max).map(Set.init) == [1, 3])
        let below = IndexRange(lower: nil, upper: .init(value: .date(15), isInclusive: false))
        // Null orders first and compares as less than every value, as the filter evaluates it.
        #expect(index.keys(in: below, limit: .max).map(Set.init) == [1, 3, 4])
    }

    @Test("indexed fetches read the version their lookup found while a writer moves values")
    func lookupsAndVersionsAgreeUnderCommits() throws {
        let container = try container(readings: 2_000)
        let failures = LockedValue<[String]>([])
        let done = Atomic<Bool>(false)
        onThreads(3) { thread in
            if thread == 0 {
                // The writer moves readings from one level to another, one save at a time.
                let writer = container.newBackgroundContext()
                for round in 0..<40 {
                    let level = Int64(round % 100)
                    let some =
                        (try? writer.fetch(FetchDescriptor<Reading>(filter: .equal("level", .int64(level))))) ?? []
                    for reading in some.prefix(5) { reading.level = (level + 37) % 100 }
                    do { try writer.save() } catch { failures.withLock { $0.append("save: \(error)") } }
                }
                done.store(true, ordering: .releasing)
                return
            }
            // Readers: every object an indexed fetch returns has the value it asked for, in the version it read.
            var level = Int64(thread)
            while !done.load(ordering: .acquiring) {
                let reader = container.newBackgroundContext()
                let asked = level
                do {
                    let found = try reader.fetch(FetchDescriptor<Reading>(predicate: #Predicate { $0.level == asked }))
                    if let wrong = found.first(where: { $0.level != asked }) {
                        failures.withLock { $0.append("asked \(asked), read \(wrong.level)") }
                    }
                } catch {
                    failures.withLock { $0.append("fetch: \(error)") }
                }
                level = (level + 13) % 100
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
    }
}
