import Foundation
import Testing

@testable import EventGraph

@Suite("Lookups by ID read the entity's version without the store's lock while nothing changed")
struct LookupVersionCacheTests {
    @Test("a context takes the version under the lock once for many lookups, and again after any save")
    func oneTakePerGeneration() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let ids = try Lesson.saved(200, in: container)
        let reader = container.newBackgroundContext()
        for (index, id) in ids.enumerated() {
            #expect((reader.object(with: id) as? Lesson)?.title == "lesson \(index)")
        }
        #expect(reader.lookupCache.takeCount == 1)

        // Another context inserts one lesson and deletes another: the reader's next lookup takes the new version.
        let writer = container.newBackgroundContext()
        let added = Lesson()
        writer.insert(added)
        added.title = "added"
        let deletedID = ids[150]
        writer.delete(try #require(writer.object(with: deletedID)))
        try writer.save()
        #expect((reader.object(with: added.objectID) as? Lesson)?.title == "added")
        #expect(reader.lookupCache.takeCount == 2)
        // (The reader registered the deleted lesson before and keeps its object; a context that did not, finds none.)
        #expect(container.newBackgroundContext().object(with: deletedID) == nil)

        // Another entity's ID takes that entity's version; the next lesson takes the lessons' again.
        let course = Course()
        writer.insert(course)
        course.code = "C1"
        try writer.save()
        #expect(reader.object(with: course.objectID) is Course)
        #expect(reader.object(with: ids[0]) is Lesson)
        #expect(reader.lookupCache.takeCount == 4)
    }

    @Test("a context lets its version go when it saves")
    func saveReleasesTheVersion() throws {
        let container = try ModelContainer(inMemoryWith: TestModels.school)
        let ids = try Lesson.saved(3, in: container)
        let context = container.newBackgroundContext()
        let lesson = try #require(context.object(with: ids[0]) as? Lesson)
        #expect(context.lookupCache.entityIndex == lesson.entity.index)
        lesson.title = "changed"
        try context.save()
        #expect(context.lookupCache.entityIndex == -1)
        #expect((context.object(with: ids[1]) as? Lesson)?.title == "lesson 1")
        #expect(context.lookupCache.takeCount == 2)
    }
}
