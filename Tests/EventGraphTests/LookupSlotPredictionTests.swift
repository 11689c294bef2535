import Foundation
import LogFormat
import Testing

@testable import EventGraph

@Suite("A lookup by ID asks for the slot its object is likely at before the key directory says where it is")
struct LookupSlotPredictionTests {
    /// A random order of `count` indices, the same in every run.
    private func shuffledIndices(_ count: Int) -> [Int] {
        var state: UInt64 = 7
        var indices = Array(0..<count)
        for position in indices.indices.reversed() where position > 0 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            indices.swapAt(position, Int((state >> 33) % UInt64(position + 1)))
        }
        return indices
    }

    @Test("objects inserted one after another are found at the slot predicted from the two lookups before")
    func sequentialObjectsArePredicted() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        // A course first: the lessons' keys start past it, their slots at 0.
        let setup = container.newBackgroundContext()
        let course = Course()
        setup.insert(course)
        course.code = "C1"
        try setup.save()
        let ids = try Lesson.saved(5_000, in: container)
        let reader = container.newBackgroundContext()
        let order = shuffledIndices(ids.count)
        for index in order {
            #expect((reader.object(with: ids[index]) as? Lesson)?.title == "lesson \(index)")
        }
        // The first lookup learns the offset, the second confirms it: every later one was predicted.
        #expect(reader.lookupCache.predictedSlotCount == ids.count - 2)
        // Looked up again, they are registered: no store lookup, nothing more predicted.
        for index in order.prefix(100) { #expect(reader.object(with: ids[index]) is Lesson) }
        #expect(reader.lookupCache.predictedSlotCount == ids.count - 2)
    }

    @Test("objects whose keys interleave with another entity's are never predicted, and are found all the same")
    func interleavedKeysAreNotPredicted() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let setup = container.newBackgroundContext()
        // Lesson n is followed by n + 1 courses: a lesson's key less its slot differs from the one before's.
        var ids: [ObjectID] = []
        var lessons: [Lesson] = []
        for index in 0..<60 {
            let lesson = Lesson()
            setup.insert(lesson)
            lesson.title = "lesson \(index)"
            lessons.append(lesson)
            for course in 0...index {
                let made = Course()
                setup.insert(made)
                made.code = "C\(index)-\(course)"
            }
        }
        try setup.save()
        ids = lessons.map(\.objectID)
        let reader = container.newBackgroundContext()
        for index in shuffledIndices(ids.count) {
            #expect((reader.object(with: ids[index]) as? Lesson)?.title == "lesson \(index)")
        }
        #expect(reader.lookupCache.predictedSlotCount == 0)
    }

    @Test("a predicted slot that is deleted, moved or past the objects does not change what a lookup finds")
    func wrongPredictionsAreHarmless() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let ids = try Lesson.saved(3_000, in: container)
        // Most lessons are deleted, so that their chunk is rewritten without the emptied slots (the survivors move).
        let writer = container.newBackgroundContext()
        let kept = Set(stride(from: 0, to: ids.count, by: 7))
        for index in ids.indices where !kept.contains(index) {
            writer.delete(try #require(writer.object(with: ids[index])))
        }
        try writer.save()
        let reader = container.newBackgroundContext()
        for index in shuffledIndices(ids.count) {
            let found = reader.object(with: ids[index]) as? Lesson
            #expect(found?.title == (kept.contains(index) ? "lesson \(index)" : nil))
        }
        // Keys past every object, and an unknown one predicted past the chunks.
        let unknown = ObjectID(
            storeUUID: ids[0].storeUUID, entityName: ids[0].entityName, key: ids[0].key + 1_000_000)
        #expect(reader.object(with: unknown) == nil)
        #expect(reader.object(with: ids[kept.max()!]) is Lesson)

        // New lessons saved after the reader's lookups sit at other offsets: found through the directory.
        let later = try Lesson.saved(50, in: container, titled: "later")
        for (index, id) in later.enumerated() {
            #expect((reader.object(with: id) as? Lesson)?.title == "later \(index)")
        }
    }

    @Test("a cache learns the offset of its entity's objects and forgets it for another entity")
    func cacheLearnsPerEntity() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let lessonIDs = try Lesson.saved(20, in: container)
        let lessonIndex = try #require(container.model.entity(named: "Lesson")).index
        let courseIndex = try #require(container.model.entity(named: "Course")).index
        var cache = EntityVersionCache()
        let store = container.store
        func lookUp(_ key: UInt64, entityIndex: Int) -> CommittedRow? {
            store.prefetchCommittedRow(
                of: ObjectIdentity(storeIndex: 0, key: key), entityIndex: entityIndex, cache: &cache,
                prefetchingProperty: 0)
            return store.committedRow(
                of: ObjectIdentity(storeIndex: 0, key: key), entityIndex: entityIndex, cache: &cache,
                prefetchingProperty: 0)
        }
        #expect(cache.predictedSlot(forKey: lessonIDs[5].key) == nil)
        #expect(lookUp(lessonIDs[3].key, entityIndex: lessonIndex)?.key == lessonIDs[3].key)
        #expect(cache.predictedSlot(forKey: lessonIDs[5].key) == nil)
        #expect(lookUp(lessonIDs[9].key, entityIndex: lessonIndex)?.key == lessonIDs[9].key)
        #expect(cache.predictedSlot(forKey: lessonIDs[5].key) == 5)
        #expect(lookUp(lessonIDs[5].key, entityIndex: lessonIndex)?.key == lessonIDs[5].key)
        #expect(cache.predictedSlotCount == 1)

        // A course's version replaces the lessons': nothing is predicted until two courses agree.
        let setup = container.newBackgroundContext()
        let course = Course()
        setup.insert(course)
        course.code = "C1"
        try setup.save()
        #expect(lookUp(course.objectID.key, entityIndex: courseIndex)?.key == course.objectID.key)
        #expect(cache.predictedSlot(forKey: course.objectID.key) == nil)
        // A key below the offset would be a slot below 0: none is predicted.
        #expect(lookUp(lessonIDs[0].key, entityIndex: lessonIndex)?.key == lessonIDs[0].key)
        #expect(lookUp(lessonIDs[1].key, entityIndex: lessonIndex)?.key == lessonIDs[1].key)
        #expect(cache.predictedSlot(forKey: 0) == nil)
    }

    @Test("asking for any slot of a version is harmless", arguments: [-1, 0, 1, 6, 1_000])
    func prefetchOfAnySlotIsHarmless(property: Int) throws {
        let empty = EntityColumns(entityIndex: 0)
        for slot in [0, 1, 4_095, 4_096, Int.max] {
            empty.prefetchResidentSlot(slot, property: property)
            empty.prefetchResidentBytes(slot, property: property)
        }
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let ids = try Lesson.saved(10, in: container)
        let lessonIndex = try #require(container.model.entity(named: "Lesson")).index
        let version = container.store.state.withLock { $0.version(ofEntity: lessonIndex) }
        for slot in [0, 9, 10, 4_095, 4_096, 8_191, Int.max / 2, Int.max] {
            version.prefetchResidentSlot(slot, property: property)
            version.prefetchResidentBytes(slot, property: property)
        }
        // A cache predicts nothing before two lookups agree; then any key's prediction is harmless.
        var cache = EntityVersionCache()
        cache.prefetchPredictedBytes(forKey: ids[0].key, property: property)
        for id in ids.prefix(3) {
            let identity = ObjectIdentity(storeIndex: 0, key: id.key)
            _ = container.store.committedRow(
                of: identity, entityIndex: lessonIndex, cache: &cache, prefetchingProperty: property)
        }
        let offset = ids[0].key
        for key in [offset - 1, offset, ids[9].key, ids[9].key + 1, 1 << 40, UInt64.max] {
            let expected = key >= offset && key - offset <= UInt64(Int.max) ? Int(key - offset) : nil
            #expect(cache.predictedSlot(forKey: key) == expected)
            cache.prefetchPredictedBytes(forKey: key, property: property)
        }
        #expect(version.row(forKey: ids[9].key)?.key == ids[9].key)
    }
}
