import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// The digest's words are made in batches by other threads and hashed in order by the calling one
/// (`StoreState.combineDigest(ofEntity:…)`); the words must be exactly those hashed one after another, or every
/// digest recorded before would stop verifying.
@Suite("State digest: words made in batches on other threads, hashed in order")
struct DigestPipelineTests {
    /// A school of several chunks: lessons with and without a course, students in three courses each (the first
    /// courses' lists of students long enough to have arrays of their own), people of two entities in a list out of
    /// key order, deleted courses.
    static func school() throws -> (container: ModelContainer, state: StoreState, directory: TemporaryDirectory) {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        let context = container.newBackgroundContext()
        var courses: [Course] = []
        for index in 0..<5000 {
            let course = Course()
            context.insert(course)
            course.code = "C\(index)"
            courses.append(course)
        }
        for index in 0..<400 {
            let lesson = Lesson()
            context.insert(lesson)
            lesson.title = "L\(index) ü"
            lesson.course = index % 7 == 0 ? nil : courses[index % 11]
            let student: Person = index % 9 == 0 ? Teacher() : Student()
            context.insert(student)
            student.name = "Student \(index)"
            student.courses = Set(courses[index % 5..<index % 5 + 3])
        }
        try context.save()
        for course in courses[4000..<4100] { context.delete(course) }
        try context.save()
        return (container, container.store.state.withLock { $0 }, directory)
    }

    @Test("each entity's digest equals its words hashed one after another, and its batches' words in order")
    func batchesHashAsTheSerialChain() throws {
        let (container, state, _) = try Self.school()
        defer { try? container.close() }
        let model = TestModels.school
        var batchesSeen = 0
        for entityIndex in StoreState.digestOrder(of: model) {
            let objects = EntityDigestWords(state: state, entityIndex: entityIndex, model: model)
            // Continuing a hasher that already holds words, as the digest does from one entity to the next.
            var serial = DigestHasher()
            serial.combine(integer: 42)
            objects.combine(0..<objects.count, into: &serial)
            var pipelined = DigestHasher()
            pipelined.combine(integer: 42)
            state.combineDigest(ofEntity: entityIndex, model: model, into: &pipelined)
            #expect(pipelined.state == serial.state, "entity \(model.entities[entityIndex].name)")
            // What the workers make: the words of each batch, hashed in batch order.
            let batchSize = StoreState.digestBatchSize(objectCount: objects.count)
            var batched = DigestHasher()
            batched.combine(integer: 42)
            for start in stride(from: 0, to: objects.count, by: batchSize) {
                var words = DigestWordList(reservingCapacity: 0)
                objects.combine(start..<min(objects.count, start + batchSize), into: &words)
                words.withWords { batched.combine(words: $0) }
                batchesSeen += 1
            }
            #expect(batched.state == serial.state, "entity \(model.entities[entityIndex].name)")
        }
        #expect(batchesSeen > 40, "the entities spread over batches")
        #expect(state.digest(model: model) == DigestFromColumnsTests.rowDigest(of: state, model: model))
    }

    @Test("a digest cancelled part way through an entity's batches stops and gives no digest")
    func cancelledPartWay() throws {
        let (container, state, _) = try Self.school()
        defer { try? container.close() }
        for asksBeforeCancelling in [0, 1, 3, 20] {
            var asked = 0
            let digest = state.digest(model: TestModels.school) {
                asked += 1
                return asked > asksBeforeCancelling
            }
            #expect(digest == nil, "cancelled after \(asksBeforeCancelling) asks")
        }
        let uncancelled = state.digest(model: TestModels.school, stoppingWhen: { false })
        #expect(uncancelled == state.digest(model: TestModels.school))
    }

    @Test("a word list records bytes and name words, copied at once, as the hasher hashes them one by one")
    func wordListCopiesBytesAsTheirWords() {
        var serial = DigestHasher()
        var list = DigestWordList(reservingCapacity: 0)  // grows from its smallest capacity along the way
        for length in 0...70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ length &* 7 &+ 0x80) }
            // Every start offset within a word: a value's bytes lie anywhere in an arena.
            let padded = [UInt8](repeating: 0xFF, count: length % 8) + bytes + [0xEE, 0xDD]
            padded.withUnsafeBytes { raw in
                let value = UnsafeRawBufferPointer(rebasing: raw[length % 8..<length % 8 + length])
                serial.combine(raw: value)
                list.combine(raw: value)
            }
            let words = DigestHasher.words(of: "name \(length) é")
            words.withUnsafeBufferPointer { serial.combine(words: $0) }
            words.withUnsafeBufferPointer { list.combine(words: $0) }
            serial.combine(integer: UInt64(length))
            list.combine(integer: UInt64(length))
        }
        var hashed = DigestHasher()
        list.withWords { hashed.combine(words: $0) }
        #expect(hashed.state == serial.state)
        #expect(list.count > 64)
    }

    @Test("a batch is a sixteenth of the entity's objects, at least one and at most 1,024")
    func batchSizes() {
        #expect(StoreState.digestBatchSize(objectCount: 0) == 1)
        #expect(StoreState.digestBatchSize(objectCount: 4) == 1)
        #expect(StoreState.digestBatchSize(objectCount: 200) == 12)
        #expect(StoreState.digestBatchSize(objectCount: 16_384) == 1_024)
        #expect(StoreState.digestBatchSize(objectCount: 1_000_000) == 1_024)
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
