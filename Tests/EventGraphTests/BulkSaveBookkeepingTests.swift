import LogFormat
import Testing

@testable import EventGraph

/// A save's bookkeeping without dictionaries: the staged rows kept in first-touch order and found by key, and a
/// commit's rows matched to the saved objects in order.
@Suite("Bookkeeping of a bulk save")
struct BulkSaveBookkeepingTests {
    private func row(_ key: UInt64, version: UInt64 = 1) -> Row {
        Row(entityIndex: 0, key: key, version: version, values: [.attribute(.int64(Int64(truncatingIfNeeded: key)))])
    }

    @Test func stagedChangesKeepFirstTouchOrderAndTheLastRow() {
        var staged = StagedChanges()
        let keys: [UInt64] = [7, 3, 1 << 40, 4, 5, .max, 0]
        for key in keys { staged.put(key: key, entityIndex: 0, row: row(key)) }
        let replaced = row(3, version: 2)
        staged.put(key: 3, entityIndex: 0, row: replaced)
        staged.put(key: 4, entityIndex: 0, row: nil)
        #expect(staged.count == keys.count)
        #expect(staged.changes.map(\.key) == keys)
        #expect(staged[3]?.row === replaced)
        #expect(staged[4].map { $0.row == nil } == true)
        #expect(staged[.max]?.row?.key == .max)
        #expect(staged[6] == nil && staged[1 << 41] == nil)
        // Dense keys, many of them, as a bulk save's are.
        var bulk = StagedChanges()
        bulk.reserveCapacity(10)
        for key in UInt64(1)...5000 { bulk.put(key: key, entityIndex: Int(key % 3), row: nil) }
        #expect(bulk.count == 5000 && bulk.changes.map(\.key) == Array(1...5000))
        #expect((UInt64(1)...5000).allSatisfy { bulk[$0]?.entityIndex == Int($0 % 3) })
        #expect(bulk[0] == nil && bulk[5001] == nil)
    }

    @Test func committedRowsAreMatchedInOrderWithoutATable() {
        let rows = (UInt64(1)...100).map { (identity: ObjectIdentity(storeIndex: 0, key: $0), row: Optional(row($0))) }
        var matcher = CommittedRowMatcher(rows)
        for key in UInt64(1)...100 { #expect(matcher.row(of: ObjectIdentity(storeIndex: 0, key: key))?.key == key) }
        #expect(!matcher.hasTable)
        // Out of order, missing and deleted objects are answered by the table.
        var deleted = rows
        deleted[9].row = nil
        var mixed = CommittedRowMatcher(deleted)
        #expect(mixed.row(of: ObjectIdentity(storeIndex: 0, key: 50))?.key == 50)
        #expect(mixed.hasTable)
        #expect(mixed.row(of: ObjectIdentity(storeIndex: 0, key: 51))?.key == 51)
        #expect(mixed.row(of: ObjectIdentity(storeIndex: 0, key: 10)) == nil)
        #expect(mixed.row(of: ObjectIdentity(storeIndex: 1, key: 11)) == nil)
        #expect(mixed.row(of: ObjectIdentity(storeIndex: 0, key: 101)) == nil)
        #expect(mixed.row(of: ObjectIdentity(storeIndex: 0, key: 2))?.key == 2)
    }

    /// A commit's rows name each touched object once, in the order the save touched them, and a bulk save's objects
    /// hold the committed rows afterwards.
    @Test func aBulkSaveGetsItsRowsInOrder() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let context = container.newBackgroundContext()
        let courses = (0..<300).map { index in
            let course = Course()
            context.insert(course)
            course.code = "C\(index)"
            return course
        }
        let lesson = Lesson()
        context.insert(lesson)
        lesson.course = courses[0]
        try context.save()
        for course in courses {
            #expect(course.row?.key == course.objectID.key)
            let stored = container.store.row(of: course.identity, entityIndex: course.entity.index)
            #expect(course.row?.version == stored?.version && course.row?.values == stored?.values)
        }
        #expect(courses[0].lessons.contains { $0 === lesson })
        try container.close()
    }
}
