import EventGraph
import EventGraphExamples
import Foundation
import Testing

/// An object does not keep its context alive (as in Core Data): once the context is released, the object's ID
/// still works, and every read or write of a property stops the process with a message naming the object and the
/// property, instead of returning an empty value that a later save could persist.
@Suite("Objects whose context was released")
struct ReleasedContextTests {
    /// A saved post by an author with an external-value-free model, fetched in a context that is then released.
    static func orphanedPost(firing: Bool) throws -> (ModelContainer, Post, ObjectID) {
        let container = try ModelContainer(inMemoryWith: BlogLibrary.model)
        let setup = container.newBackgroundContext()
        let post = setup.fetchOrInsert(Post.self, unique: \.identity, equals: 3) { $0.title = "kept" }
        post.authoredBy = setup.fetchOrInsert(Author.self, unique: \.identity, equals: 1)
        try setup.save()
        let id = post.objectID
        let orphan: Post = try {
            let context = container.newBackgroundContext()
            let fetched = try #require(context.object(with: id) as? Post)
            if firing { _ = fetched.title }
            return fetched
        }()
        return (container, orphan, id)
    }

    @Test(arguments: [false, true])
    func theObjectIDStillWorks(firing: Bool) throws {
        let (_, orphan, id) = try Self.orphanedPost(firing: firing)
        #expect(orphan.objectID == id)
        #expect(orphan.context == nil)
        #expect(orphan.description.contains("context was released"))
    }

    @Test func readingARelationshipStopsNamingTheObjectAndProperty() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, orphan, _) = try ReleasedContextTests.orphanedPost(firing: true)
            _ = orphan.authoredBy
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Post.authoredBy") && text.contains("was released"), "\(text)")
    }

    @Test func readingAnAttributeOfAFaultStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, orphan, _) = try ReleasedContextTests.orphanedPost(firing: false)
            _ = orphan.title
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Post.title") && text.contains("was released"), "\(text)")
    }

    @Test func writingStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, orphan, _) = try ReleasedContextTests.orphanedPost(firing: true)
            orphan.title = "lost"
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Post.title") && text.contains("was released"), "\(text)")
    }

    @Test func readingAnExternalValueStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let directory = TemporaryDirectory()
            let container = try PhotoLocations.open(path: directory.file())
            let setup = container.newBackgroundContext()
            PhotoLocations.addEvent(latitude: 0, longitude: 0, image: .filled(width: 40, height: 40, level: 9), in: setup)
            try setup.save()
            let photo: Photo = try {
                let context = container.newBackgroundContext()
                return try #require(try context.fetch(FetchDescriptor<Photo>()).first)
            }()
            _ = photo.image
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Photo.image") && text.contains("was released"), "\(text)")
    }

    @Test func anObjectNeverInsertedStillReadsAndWritesItsOwnValues() {
        let post = Post()
        post.title = "draft"
        #expect(post.title == "draft")
        #expect(post.authoredBy == nil)
    }
}
