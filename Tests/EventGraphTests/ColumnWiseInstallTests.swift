import Foundation
import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// A large save of new objects is installed column by column on every core (`ColumnChunk.appendInserted`,
/// `StoreState.install` with the save's unique tuples): the columns, the directory and the state must be exactly
/// what writing the rows one by one makes.
@Suite("Column-wise install of a large save of new objects")
struct ColumnWiseInstallTests {
    /// A random value of one of every column storage: fixed-width, text (ASCII and not, empty, long), UUID, blob
    /// reference, null, to-one, to-many.
    static func randomValue(using random: inout SeededGenerator) -> PropertyValue {
        let target = { (random: inout SeededGenerator) in
            ObjectReference(
                entityIndex: UInt32.random(in: 0..<3, using: &random), key: UInt64.random(in: 1...9_999, using: &random)
            )
        }
        switch Int.random(in: 0..<11, using: &random) {
        case 0: return .attribute(.int64(Int64.random(in: -1_000...1_000, using: &random)))
        case 1: return .attribute(.double(Double.random(in: -1...1, using: &random)))
        case 2: return .attribute(.string(String(repeating: "ab", count: Int.random(in: 0...40, using: &random))))
        case 3: return .attribute(.string("é" + String(Int.random(in: 0...99, using: &random))))
        case 4: return .attribute(.bool(Bool.random(using: &random)))
        case 5: return .attribute(.null)
        case 6: return .toOne(nil)
        case 7: return .toOne(target(&random))
        case 8: return .toMany((0..<Int.random(in: 0...5, using: &random)).map { _ in target(&random) })
        case 9: return .attribute(.uuid(LogUUID(high: 7, low: UInt64.random(in: 0...255, using: &random))))
        default: return .attribute(.int32(Int32.random(in: 0...9, using: &random)))
        }
    }

    /// Rows of `propertyCount` values over shared defaults: each changes some properties, some more than once (the
    /// last change wins), and leaves the others at their defaults.
    static func randomRows(count: Int, propertyCount: Int, firstKey: UInt64, using random: inout SeededGenerator)
        -> [InsertedRow]
    {
        let defaults = (0..<propertyCount).map { _ in randomValue(using: &random) }
        return (0..<count).map { number in
            let changes = (0..<Int.random(in: 0...(propertyCount + 3), using: &random)).map { _ in
                PropertyChange(
                    propertyIndex: UInt32.random(in: 0..<UInt32(propertyCount), using: &random),
                    value: randomValue(using: &random))
            }
            let (key, version) = (firstKey + UInt64(number), UInt64(1 + number % 3))
            return InsertedRow(
                row: Row(entityIndex: 0, key: key, version: version, changes: changes, defaults: defaults),
                values: InsertedValues(changes: changes, defaults: defaults))
        }
    }

    /// A chunk written column by column, in batches and after slots already used, holds what the rows written one
    /// by one make: every slot's key, version, value count, liveness and values.
    @Test(arguments: [1, 700, 1_300, ColumnChunk.slotCapacity - 5])
    func aChunkWrittenColumnByColumnHoldsTheRowsValues(rowCount: Int) {
        let seed = TestSeed.make()
        var random = SeededGenerator(seed: seed)
        let propertyCount = 9
        let rows = Self.randomRows(count: rowCount, propertyCount: propertyCount, firstKey: 100, using: &random)
        var byColumns = ColumnChunk()
        var byRows = ColumnChunk()
        // Five slots in use first, one of them shorter (fewer values) than the new rows.
        for key in UInt64(1)...5 {
            let values = (0..<(key == 3 ? 4 : propertyCount)).map { _ in Self.randomValue(using: &random) }
            _ = byColumns.append(key: key, version: 1, values: values)
            _ = byRows.append(key: key, version: 1, values: values)
        }
        let first = rows.withUnsafeBufferPointer { byColumns.appendInserted($0) }
        #expect(first == 5)
        for row in rows {
            _ = byRows.append(key: row.key, version: row.version, values: RowValues(.inserted(row.values)))
        }
        #expect(byColumns.slotCount == byRows.slotCount)
        #expect(byColumns.keys == byRows.keys && byColumns.versions == byRows.versions)
        for slot in 0..<byRows.slotCount {
            #expect(byColumns.isLive(slot) && byColumns.valueCount(at: slot) == byRows.valueCount(at: slot))
            for property in 0..<byRows.valueCount(at: slot)
            where byColumns.columns[property].value(at: slot) != byRows.columns[property].value(at: slot) {
                Issue.record("seed \(seed), slot \(slot), property \(property): the values differ")
            }
        }
        #expect(byColumns.columns.count == byRows.columns.count)
    }

    /// Saves of new objects of two related entities (more than two chunks of courses, after objects already saved)
    /// and of an entity with an attribute index, installed with their unique tuples, column by column, leave the
    /// state as installing their rows one by one does: the same digest, the same rows under every key, the same
    /// uniqueness and attribute indexes.
    @Test func aLargeSaveOfNewObjectsInstallsAsItsRowsWould() throws {
        let model = TestModels.school
        let (course, lesson) = (ConsistentInsertionTests.entity("Course"), ConsistentInsertionTests.entity("Lesson"))
        let properties = model.entities[course].properties
        let code = try #require(properties.firstIndex { $0.name == "code" })
        let credits = try #require(properties.firstIndex { $0.name == "credits" })
        let lessons = try #require(properties.firstIndex { $0.name == "lessons" })
        let lessonProperties = model.entities[lesson].properties
        let title = try #require(lessonProperties.firstIndex { $0.name == "title" })
        let lessonCourse = try #require(lessonProperties.firstIndex { $0.name == "course" })
        let queue = CommitQueue(lastTransactionID: 0, lastCommitTimeMicroseconds: 0)

        func insertion(courses: Range<Int>, lessonsPerCourse: Int) -> [ChangeOperation] {
            var operations: [ChangeOperation] = []
            for number in courses {
                let reference = ObjectReference(entityIndex: UInt32(course), key: UInt64(10 + number))
                let listed = (0..<lessonsPerCourse).map {
                    ObjectReference(entityIndex: UInt32(lesson), key: UInt64(100_000 + number * lessonsPerCourse + $0))
                }
                var changes = [PropertyChange(propertyIndex: UInt32(code), value: .attribute(.string("C\(number)")))]
                if number % 3 != 0 {
                    changes.append(
                        PropertyChange(propertyIndex: UInt32(credits), value: .attribute(.int32(Int32(number % 30)))))
                }
                changes.append(PropertyChange(propertyIndex: UInt32(lessons), value: .toMany(listed)))
                operations.append(.insert(reference, changes))
                for (position, item) in listed.enumerated() {
                    operations.append(
                        .insert(
                            item,
                            [
                                PropertyChange(
                                    propertyIndex: UInt32(title), value: .attribute(.string("lesson \(position) ✓"))),
                                PropertyChange(propertyIndex: UInt32(lessonCourse), value: .toOne(reference)),
                            ]))
                }
            }
            return operations
        }
        func claimedTuples(_ staged: StagedChanges) -> [UniqueKey: UInt64] {
            var claimed: [UniqueKey: UInt64] = [:]
            for change in staged.changes {
                for constraint in model.entities[change.entityIndex].uniqueConstraints {
                    if let row = change.row, let tuple = UniqueKey(constraint, values: row.values) {
                        claimed[tuple] = change.key
                    }
                }
            }
            return claimed
        }

        // Students have an attribute index (their name, repeated): its changes are recorded beside the columns.
        let student = ConsistentInsertionTests.entity("Student")
        let name = try #require(model.entities[student].properties.firstIndex { $0.name == "name" })
        let students: [ChangeOperation] = (0..<3_000).map { number in
            .insert(
                ObjectReference(entityIndex: UInt32(student), key: UInt64(500_000 + number)),
                [PropertyChange(propertyIndex: UInt32(name), value: .attribute(.string("student \(number % 700)")))])
        }

        var byRows = StoreState(model: model)
        var byColumns = StoreState(model: model)
        // 100 courses first, in a small save (row by row in both), then 6,000 courses, then 1,500 more and 3,000
        // lessons, then 3,000 students.
        let saves = [(0..<100, 0), (100..<6_100, 0), (6_100..<7_600, 2), (0..<0, 0)]
        for (courses, lessonsPerCourse) in saves {
            let operations =
                courses.isEmpty ? students : insertion(courses: courses, lessonsPerCourse: lessonsPerCourse)
            let staged = try #require(
                byRows.stageInsertion(operations, model: model, version: 1, overlay: queue, checksInverses: true))
            #expect(staged.count < 1_000 || staged.count >= StoreState.columnWiseInstallMinimum)
            byRows.install(staged, model: model)
            byColumns.install(staged, model: model, newTuples: claimedTuples(staged))
        }
        #expect(byColumns.digest(model: model) == byRows.digest(model: model))
        #expect(byColumns.uniqueIndex == byRows.uniqueIndex)
        #expect(byRows.indexes[student].first?.count == 3_000)
        for (columnsIndex, rowsIndex) in zip(byColumns.indexes[student], byRows.indexes[student]) {
            #expect(columnsIndex.entries.map(\.key) == rowsIndex.entries.map(\.key))
            #expect(columnsIndex.entries.map(\.value) == rowsIndex.entries.map(\.value))
        }
        let courseKeys: [UInt64] = (0..<7_600).map { UInt64(10 + $0) }
        let lessonKeys: [UInt64] = (0..<3_000).map { UInt64(100_000 + 6_100 * 2 + $0) }
        for (entity, keys) in [(course, courseKeys), (lesson, lessonKeys)] {
            for key in keys {
                let expected = try #require(byRows.row(entityIndex: entity, key: key), "key \(key)")
                let found = try #require(byColumns.row(entityIndex: entity, key: key), "key \(key)")
                #expect(Array(found.values) == Array(expected.values), "entity \(entity), key \(key)")
            }
        }
    }
}
