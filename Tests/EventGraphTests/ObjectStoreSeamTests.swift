import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// Contexts work over any ``ObjectStore``: here a dictionary of rows without a log (``DictionaryObjectStore``).
@Suite("A context over another object store")
struct ObjectStoreSeamTests {
    @Test func insertsSavesFetchesFaultsUpdatesAndDeletesThroughTheSeam() throws {
        let objectStore = DictionaryObjectStore(model: TestModels.school, storeCount: 1)
        let writer = ObjectContext(parentStore: objectStore, name: "writer")
        let course = Course()
        writer.insert(course)
        course.code = "SE1"
        course.credits = 6
        let lesson = Lesson()
        writer.insert(lesson)
        lesson.title = "intro"
        lesson.course = course
        try writer.save()
        #expect(objectStore.lastTransactionID == 1)
        #expect(!course.objectID.isTemporary)

        let reader = ObjectContext(parentStore: objectStore, name: "reader")
        let found = try #require(reader.object(with: course.objectID) as? Course)
        #expect(found.isFault)
        #expect(try reader.fetch(FetchDescriptor<Course>(predicate: #Predicate { $0.code == "SE1" })) == [found])
        #expect(found.credits == 6)
        #expect(found.lessons.map(\.title) == ["intro"], "a relationship faults its target in through the seam")
        #expect(try reader.fetchCount(FetchDescriptor<Lesson>()) == 1)
        #expect(try reader.fetchOrInsert(Course.self, unique: \.code, equals: "SE1") === found)

        found.credits = 7
        try reader.save()
        let checker = ObjectContext(parentStore: objectStore, name: "checker")
        #expect((checker.object(with: course.objectID) as? Course)?.credits == 7)

        reader.delete(found)
        try reader.save()
        #expect(try checker.fetchCount(FetchDescriptor<Course>()) == 0)
        #expect(try checker.fetchCount(FetchDescriptor<Lesson>()) == 0, "the delete cascaded to the lesson")
    }
}

/// Keys repeat across stores, so an object's identity in a context includes its store.
@Suite("Objects of several stores in one context")
struct SeveralStoresInOneContextTests {
    private let model = TestModels.school
    private var courseIndex: UInt32 { UInt32(model.entity(named: "Course")!.index) }

    /// Two stores, each holding a course with key 7 (codes A and B), and a lesson in the second store pointing at
    /// the second store's course.
    private func twoStores() -> DictionaryObjectStore {
        let objectStore = DictionaryObjectStore(model: model, storeCount: 2)
        objectStore.seed("Course", inStore: 0, key: 7, ["code": .attribute(.string("A"))])
        objectStore.seed("Course", inStore: 1, key: 7, ["code": .attribute(.string("B"))])
        let course = ObjectReference(storeIndex: 1, entityIndex: courseIndex, key: 7)
        objectStore.seed("Lesson", inStore: 1, key: 8, ["title": .attribute(.string("b")), "course": .toOne(course)])
        return objectStore
    }

    @Test func theSameKeyInTwoStoresIsTwoObjects() throws {
        let objectStore = twoStores()
        let context = ObjectContext(parentStore: objectStore, name: "both")
        let ids = objectStore.storeUUIDs.map { ObjectID(storeUUID: $0, entityName: "Course", key: 7) }
        let first = try #require(context.object(with: ids[0]) as? Course)
        let second = try #require(context.object(with: ids[1]) as? Course)
        #expect(first !== second)
        #expect([first.code, second.code] == ["A", "B"])
        #expect([first.objectID, second.objectID] == ids)

        let fetched = try context.fetch(FetchDescriptor<Course>(sortBy: [SortDescriptor(\.code)]))
        #expect(fetched.count == 2 && fetched[0] === first && fetched[1] === second, "a fetch spans both stores")
        #expect(context.registeredObjects.count == 2)
        #expect(try context.fetchOrInsert(Course.self, unique: \.code, equals: "B") === second)

        let lessonID = ObjectID(storeUUID: objectStore.storeUUIDs[1], entityName: "Lesson", key: 8)
        let lesson = try #require(context.object(with: lessonID) as? Lesson)
        #expect(lesson.course === second, "a reference resolves in the store it names")
    }

    @Test func aSaveNamesEachObjectByItsStore() throws {
        let objectStore = twoStores()
        let context = ObjectContext(parentStore: objectStore, name: "both")
        let ids = objectStore.storeUUIDs.map { ObjectID(storeUUID: $0, entityName: "Course", key: 7) }
        let first = try #require(context.object(with: ids[0]) as? Course)
        let second = try #require(context.object(with: ids[1]) as? Course)
        second.credits = 9
        try context.save()
        let credits = UInt32(model.entity(named: "Course")!.attribute(named: "credits")!.index)
        let operations = try #require(objectStore.requests.last).operations
        #expect(
            operations == [
                .update(
                    ObjectReference(storeIndex: 1, entityIndex: courseIndex, key: 7),
                    [PropertyChange(propertyIndex: credits, value: .attribute(.int32(9)))])
            ])
        #expect(first.credits == 5 && second.credits == 9)
    }

    @Test func aNewObjectGetsItsIdentityFromTheStoreItIsPlacedIn() throws {
        let objectStore = DictionaryObjectStore(model: model, storeCount: 2, placement: ["Course": 1])
        let context = ObjectContext(parentStore: objectStore, name: "placing")
        let course = Course()
        context.insert(course)
        course.code = "C"
        let note = Note()
        context.insert(note)
        #expect(course.objectID.storeUUID == objectStore.storeUUIDs[1])
        #expect(note.objectID.storeUUID == objectStore.storeUUIDs[0])
        #expect(course.objectID.key == note.objectID.key, "each store numbers its objects from the same start")
        try context.save()
        let inserted = try #require(objectStore.requests.last).operations.compactMap { operation in
            if case .insert(let reference, _) = operation { reference } else { nil }
        }
        #expect(inserted.map(\.storeIndex).sorted() == [0, 1])
        #expect(context.object(with: course.objectID) === course && context.object(with: note.objectID) === note)
    }
}
