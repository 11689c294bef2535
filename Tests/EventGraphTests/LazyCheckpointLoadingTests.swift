import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A store opened from a checkpoint in the chunk layout (format 1.3) keeps the entity chunks on disk: open reads the
/// directory and the tail, a chunk is read the first time something touches it, and a damaged chunk stops only what
/// touches it.
@Suite("Lazily loaded checkpoint chunks")
struct LazyCheckpointLoadingTests {
    static let studentEntity = TestModels.school.entities.firstIndex { $0.name == "Student" }!
    static let courseEntity = TestModels.school.entities.firstIndex { $0.name == "Course" }!
    static let nameProperty = TestModels.school.entities[studentEntity].properties.firstIndex { $0.name == "name" }!

    /// The committed state of a container's store.
    static func state(of container: ModelContainer) -> StoreState {
        container.store.state.withLock { $0 }
    }

    /// The digest of a full replay of the log at `path`, every chunk read (what `egctl replay` computes).
    static func fullReplayDigest(of path: String) throws -> StateDigest {
        var graph = LogGraph()
        try LogReader(path: path).scan { record in try graph.apply(record) }
        return graph.digest()
    }

    @Test func openReadsNoChunkUntilAnObjectInItIsTouched() throws {
        let directory = TemporaryDirectory()
        let (digest, _) = try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 10_000)
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        defer { try? container.close() }
        let students = Self.state(of: container).version(ofEntity: Self.studentEntity)
        #expect(students.chunkCount == 3)
        #expect(students.unreadChunkCount == 3)
        #expect(Self.state(of: container).version(ofEntity: Self.courseEntity).unreadChunkCount == 1)

        // An object of the third chunk, by key: only that chunk is read.
        let lastKey = try #require(Self.studentKeys(of: directory.file()).last)
        let row = try #require(container.store.row(entityIndex: Self.studentEntity, key: lastKey))
        #expect(row.key == lastKey)
        #expect(students.unreadChunkCount == 2)

        // A lookup by a unique value builds the course's uniqueness index from its one chunk, not the students'.
        let context = container.newBackgroundContext()
        let courses = try context.fetch(FetchDescriptor<Course>(filter: .equal("code", .string("B"))))
        #expect(courses.map(\.code) == ["B"])
        #expect(Self.state(of: container).version(ofEntity: Self.courseEntity).unreadChunkCount == 0)
        #expect(students.unreadChunkCount == 2)
        // Only the uniqueness entries were built; the attribute indexes wait for a fetch that uses them.
        #expect(Self.state(of: container).pendingUniqueEntities.isDisjoint(with: [Self.courseEntity]))
        #expect(Self.state(of: container).pendingAttributeIndexEntities.contains(Self.courseEntity))
        let named = try context.fetch(FetchDescriptor<Student>(filter: .equal("name", .string("student 9998"))))
        #expect(named.count == 1)
        #expect(!Self.state(of: container).pendingAttributeIndexEntities.contains(Self.studentEntity))

        #expect(try container.stateDigest() == digest)
        #expect(students.unreadChunkCount == 0)
    }

    @Test func lookupsByKeyAndUniqueValueAfterATailOfUpdatesAndDeletes() throws {
        let directory = TemporaryDirectory()
        try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 10_000)
        let keys = try Self.studentKeys(of: directory.file())
        // The tail: a course renamed, one deleted, one inserted; students of the first chunk renamed and deleted.
        let expected: StateDigest
        do {
            let container = try ModelContainer(path: directory.file(), model: TestModels.school)
            let context = container.newBackgroundContext()
            let a = try #require(try context.fetch(FetchDescriptor<Course>(filter: .equal("code", .string("A")))).first)
            a.code = "A2"
            let b = try #require(try context.fetch(FetchDescriptor<Course>(filter: .equal("code", .string("B")))).first)
            context.delete(b)
            let c = Course()
            context.insert(c)
            c.code = "C"
            try context.save()
            for key in keys.prefix(10) {
                let id = ObjectID(storeUUID: container.storeUUID, entityName: "Student", key: key)
                let student = try #require(context.object(with: id) as? Student)
                if key % 2 == 0 { student.name = "renamed \(key)" } else { context.delete(student) }
            }
            try context.save()
            expected = try container.stateDigest()
            try container.close()
        }

        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        defer { try? container.close() }
        let students = Self.state(of: container).version(ofEntity: Self.studentEntity)
        // The tail touched the first chunk only.
        #expect(students.unreadChunkCount == 2)
        let context = container.newBackgroundContext()
        for (code, found) in [("A", false), ("A2", true), ("B", false), ("C", true)] {
            let courses = try context.fetch(FetchDescriptor<Course>(filter: .equal("code", .string(code))))
            #expect(courses.map(\.code) == (found ? [code] : []), "code \(code)")
        }
        for key in keys.prefix(10) {
            let row = container.store.row(entityIndex: Self.studentEntity, key: key)
            if key % 2 == 0 {
                #expect(row?.values.contains(.attribute(.string("renamed \(key)"))) == true)
            } else {
                #expect(row == nil)
            }
        }
        #expect(container.store.row(entityIndex: Self.studentEntity, key: keys.last!) != nil)
        #expect(students.unreadChunkCount == 1)
        // A new course with a taken code is refused by the uniqueness index built on first need.
        let duplicate = Course()
        context.insert(duplicate)
        duplicate.code = "C"
        #expect(throws: EventGraphError.self) { try context.save() }
        context.rollback()

        #expect(try container.stateDigest() == expected)
        #expect(try Self.fullReplayDigest(of: directory.file()) == expected)
    }

    @Test func aViewAsOfATransactionOfTheTailReadsTheCheckpointLazilyToo() throws {
        let directory = TemporaryDirectory()
        try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 10_000)
        let keys = try Self.studentKeys(of: directory.file())
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        defer { try? container.close() }
        let store = container.store
        _ = try store.commit(Self.renaming(studentKey: keys[0]))
        let renamed = container.store.lastTransactionID
        _ = try store.commit(Self.renaming(studentKey: keys[1]))

        let view = try container.view(asOfTransaction: renamed)
        let students = Self.state(of: view).version(ofEntity: Self.studentEntity)
        #expect(students.unloadedChunkCount == 2)
        let name = { (row: Row?) in row.map { "\($0.values[Self.nameProperty])" } }
        #expect(
            name(view.store.row(entityIndex: Self.studentEntity, key: keys[0]))
                == name(
                    store.row(
                        entityIndex: Self.studentEntity, key: keys[0])))
        #expect(
            name(view.store.row(entityIndex: Self.studentEntity, key: keys[1]))
                != name(
                    store.row(
                        entityIndex: Self.studentEntity, key: keys[1])))
        #expect(view.store.row(entityIndex: Self.studentEntity, key: keys.last!) != nil)
    }

    @Test func aDamagedChunkStopsOnlyWhatTouchesIt() throws {
        let directory = TemporaryDirectory()
        try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 10_000)
        let keys = try Self.studentKeys(of: directory.file())
        let target = try CheckpointChunkLayoutTests.damageSecondStudentChunk(at: directory.file())

        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        defer { try? container.close() }
        // Objects of the other chunks read and save as usual.
        let context = container.newBackgroundContext()
        let id = ObjectID(storeUUID: container.storeUUID, entityName: "Student", key: keys[0])
        let first = try #require(context.object(with: id) as? Student)
        first.name = "still fine"
        try context.save()

        // A save that changes an object of the damaged chunk throws naming it.
        let inDamaged = try #require(Self.damagedChunkKey(keys, target: target, in: container))
        Self.expectDamageReported(in: container, changingStudent: inDamaged, target: target)
    }

    /// Expects a commit changing a student of the damaged chunk, a digest and a compaction each to throw an error
    /// naming the chunk, its entity, its byte offset and the file.
    static func expectDamageReported(
        in container: ModelContainer, changingStudent key: UInt64, target: EntityChunkEntry
    ) {
        let changes = renaming(studentKey: key)
        for attempt in [
            { () throws -> Void in _ = try container.store.commit(changes) },
            { _ = try container.stateDigest() },
            { _ = try container.compact() },
        ] {
            let error = #expect(throws: EventGraphError.self) { try attempt() }
            let message = error?.message ?? ""
            #expect(message.contains("chunk 1 of entity Student"), "\(message)")
            #expect(message.contains("byte offset \(target.byteOffset)"), "\(message)")
            #expect(message.contains(container.path ?? "?"), "\(message)")
        }
    }

    @Test func threadsTouchingOneUnloadedChunkAtOnceReadItOnceAndSeeTheSameRows() throws {
        let directory = TemporaryDirectory()
        try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 10_000)
        let keys = try Self.studentKeys(of: directory.file())
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        defer { try? container.close() }
        let store = container.store
        let barrier = ThreadBarrier(count: 8)
        // A LockedValue, not Synchronization.Mutex: on Linux, Mutex hands the lock over through a futex the thread
        // sanitizer cannot see, so it reported the accesses to this dictionary under the lock as a race (a false
        // positive of the test's own lock, not a race in the store; see PthreadMutex).
        let names = LockedValue<[UInt64: Set<String>]>([:])
        onThreads(8) { thread in
            barrier.arriveAndWait()
            // Every thread reads keys of every chunk, in its own order, while one commits a change to the middle one.
            for key in thread % 2 == 0 ? keys : keys.reversed() where key % 97 == UInt64(thread) {
                let row = store.row(entityIndex: Self.studentEntity, key: key)
                let name = row.map { "\($0.values[Self.nameProperty])" } ?? "missing"
                names.withLock { _ = $0[key, default: []].insert(name) }
            }
            if thread == 0 {
                let key = keys[keys.count / 2]
                #expect(throws: Never.self) { _ = try store.commit(Self.renaming(studentKey: key)) }
            }
        }
        let seen = names.withLock { $0 }
        #expect(seen.values.allSatisfy { $0.count == 1 && !$0.contains("missing") })
        #expect(Self.state(of: container).version(ofEntity: Self.studentEntity).unreadChunkCount == 0)
        #expect(try container.stateDigest() == Self.fullReplayDigest(of: directory.file()))
    }

    /// A request that renames one student, straight to the store (no context).
    static func renaming(studentKey key: UInt64) -> CommitRequest {
        CommitRequest(
            author: "test",
            operations: [
                .update(
                    ObjectReference(entityIndex: UInt32(studentEntity), key: key),
                    [PropertyChange(propertyIndex: UInt32(nameProperty), value: .attribute(.string("x")))])
            ], readRows: [:], mergePolicy: .storeWins)
    }

    /// A key the damaged chunk's directory entry lists (between its smallest and largest key).
    static func damagedChunkKey(_ keys: [UInt64], target: EntityChunkEntry, in container: ModelContainer) -> UInt64? {
        keys.first { $0 >= target.minKey && $0 <= target.maxKey }
    }

    /// The keys of the live students of the compacted store at `path`, in slot order.
    static func studentKeys(of path: String) throws -> [UInt64] {
        var keys: [UInt64] = []
        try LogReader(path: path).scan { record in
            if case .checkpointChunk(let chunk, _) = record {
                keys += chunk.records.filter { Int($0.object.entityIndex) == studentEntity }.map(\.object.key)
            }
        }
        return keys
    }
}
