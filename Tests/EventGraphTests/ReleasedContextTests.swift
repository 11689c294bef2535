import EventGraph
import EventGraphExamples
import Foundation
import Testing

/// An object does not keep its context alive (as in Core Data). Once the context is released, the object's ID and
/// the values it holds still read; whatever needs the context (relationship targets, an external value not read
/// yet, a fault's first read) and every change stop the process with a message naming the object and the
/// property, instead of returning an empty value or accepting a change no save can persist.
@Suite("Objects whose context was released")
struct ReleasedContextTests {
    /// A saved post by author 1, fetched with its author (a fault) in a context that is then released.
    static func orphanedPost() throws -> (ModelContainer, Post, Author, ObjectID) {
        let container = try ModelContainer(inMemoryWith: BlogLibrary.model)
        let setup = container.newBackgroundContext()
        let post = try setup.fetchOrInsert(Post.self, unique: \.identity, equals: 3) { $0.title = "kept" }
        post.authoredBy = try setup.fetchOrInsert(Author.self, unique: \.identity, equals: 1) { $0.name = "Ada" }
        try setup.save()
        let id = post.objectID
        let (orphan, author): (Post, Author) = try {
            let context = container.newBackgroundContext()
            let fetched = try #require(try context.fetch(FetchDescriptor<Post>()).first)
            return (fetched, try #require(fetched.authoredBy))
        }()
        return (container, orphan, author, id)
    }

    /// The standard error of an exit test's child process.
    private static func standardError(_ result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }

    @Test func theIDAndTheValuesTheObjectHoldsStillRead() throws {
        let (_, orphan, author, id) = try Self.orphanedPost()
        #expect(orphan.context == nil)
        #expect(orphan.objectID == id)
        #expect(author.objectID.entityName == "Author")
        #expect(orphan.title == "kept", "a fetched object holds its row")
        #expect(orphan.description.contains("context was released"))
    }

    @Test func readingARelationshipStopsNamingTheObjectAndProperty() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, orphan, _, _) = try ReleasedContextTests.orphanedPost()
            _ = orphan.authoredBy
        }
        let text = Self.standardError(result)
        #expect(text.contains("Post.authoredBy") && text.contains("was released"), "\(text)")
    }

    @Test func readingAnAttributeOfAFaultStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, _, author, _) = try ReleasedContextTests.orphanedPost()
            _ = author.name
        }
        let text = Self.standardError(result)
        #expect(text.contains("Author.name") && text.contains("was released"), "\(text)")
    }

    @Test func writingStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (_, orphan, _, _) = try ReleasedContextTests.orphanedPost()
            orphan.title = "lost"
        }
        let text = Self.standardError(result)
        #expect(text.contains("change Post.title") && text.contains("was released"), "\(text)")
    }

    @Test func readingAnExternalValueNotReadYetStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let directory = TemporaryDirectory()
            let container = try PhotoLocations.open(path: directory.file())
            let setup = container.newBackgroundContext()
            PhotoLocations.addEvent(
                latitude: 0, longitude: 0, image: .filled(width: 40, height: 40, level: 9), in: setup)
            try setup.save()
            let photo: Photo = try {
                let context = container.newBackgroundContext()
                return try #require(try context.fetch(FetchDescriptor<Photo>()).first)
            }()
            _ = photo.image
        }
        let text = Self.standardError(result)
        #expect(text.contains("Photo.image") && text.contains("was released"), "\(text)")
    }

    @Test func anObjectNeverInsertedStillReadsAndWritesItsOwnValues() {
        let post = Post()
        post.title = "draft"
        #expect(post.title == "draft")
        #expect(post.authoredBy == nil)
    }
}
