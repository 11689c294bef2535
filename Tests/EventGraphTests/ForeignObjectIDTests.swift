import EventGraph
import Foundation
import Testing

/// Two stores of one model hand out the same keys; an ID carries its store's UUID and resolves only there.
@Suite("Object IDs of another store")
struct ForeignObjectIDTests {
    /// Two stores, each with one saved course under the same key; returns the first store's context (holding its
    /// own course registered when `registered`) and the second store's course ID.
    private func twoStores(registered: Bool) throws -> (ObjectContext, ObjectID, ObjectID) {
        var ids: [ObjectID] = []
        var contexts: [ObjectContext] = []
        for code in ["A", "B"] {
            let container = try ModelContainer(inMemoryWith: TestModels.school)
            let context = container.newBackgroundContext()
            let course = Course()
            context.insert(course)
            course.code = code
            try context.save()
            ids.append(course.objectID)
            contexts.append(registered ? context : container.newBackgroundContext())
        }
        try #require(ids[0].key == ids[1].key && ids[0].storeUUID != ids[1].storeUUID, "the stores share keys")
        return (contexts[0], ids[0], ids[1])
    }

    @Test(arguments: [false, true])
    func anIDOfAnotherStoreFindsNothing(registered: Bool) throws {
        let (context, own, foreign) = try twoStores(registered: registered)
        #expect((context.object(with: own) as? Course)?.code == "A")
        #expect(context.object(with: foreign) == nil)
        #expect(context.fetch(Course.self, ids: [foreign, own]).map(\.code) == ["A"])
        let parsed = try #require(ObjectID(uriString: foreign.uriString))
        #expect(context.object(with: parsed) == nil, "the URI form keeps the store")
    }

    @Test func aTemporaryIDOfAnotherStoreFindsNothing() throws {
        let first = try ModelContainer(inMemoryWith: TestModels.school).newBackgroundContext()
        let second = try ModelContainer(inMemoryWith: TestModels.school).newBackgroundContext()
        let mine = Course()
        let theirs = Course()
        first.insert(mine)
        second.insert(theirs)
        try #require(mine.objectID.key == theirs.objectID.key)
        #expect(first.object(with: theirs.objectID) == nil)
        #expect(first.object(with: mine.objectID) === mine)
    }

    @Test func settingARelationshipByAnIDOfAnotherStoreIsRefusedNamingTheStore() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let first = try ModelContainer(inMemoryWith: TestModels.school).newBackgroundContext()
            let second = try ModelContainer(inMemoryWith: TestModels.school).newBackgroundContext()
            let lesson = Lesson()
            first.insert(lesson)
            let course = Course()
            second.insert(course)
            lesson.setValue(.toOne(course.objectID), forKey: "course")
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("another store"), "\(text)")
    }
}
