import EventGraph
import Foundation
import Testing

// The README's "Using EventGraph" example, kept compiling and passing here (change both together).
private final class ReadmeAuthor: ManagedObject {
    @Attribute(.unique) var identity: Int64 = 0
    @Attribute var name: String = ""
    @Relationship(inverse: "authoredBy", deleteRule: .cascade) var posts: Set<ReadmePost>
}

private final class ReadmePost: ManagedObject {
    @Attribute(.unique) var identity: Int64 = 0
    @Attribute(.length(1...)) var title: String = "Untitled"
    @Relationship(inverse: "posts") var authoredBy: ReadmeAuthor?
}

@Suite("README example")
struct ReadmeExampleTests {
    @Test("the README's example runs and its save reaches the log")
    func readmeExample() throws {
        let directory = FileManager.default.temporaryDirectory.path + "/eg-readme-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/blog.eglog"
        do {
            let model = try ObjectModel(name: "Blog", version: "1", types: [ReadmeAuthor.self, ReadmePost.self])
            let container = try ModelContainer(path: path, model: model)
            let context = container.newBackgroundContext(name: "import")
            let post = try context.fetchOrInsert(ReadmePost.self, unique: \.identity, equals: 42)
            post.title = "Hello, Linux"
            post.authoredBy = try context.fetchOrInsert(ReadmeAuthor.self, unique: \.identity, equals: 1)
            try context.save()
            let recent = try context.fetch(
                FetchDescriptor<ReadmePost>(predicate: #Predicate<ReadmePost> { $0.identity > 10 }))
            #expect(recent.map(\.title) == ["Hello, Linux"])
            try container.close()
        }
        let model = try ObjectModel(name: "Blog", version: "1", types: [ReadmeAuthor.self, ReadmePost.self])
        let reopened = try ModelContainer(path: path, model: model)
        let context = reopened.newBackgroundContext(name: "check")
        let authors = try context.fetch(FetchDescriptor<ReadmeAuthor>())
        #expect(authors.first?.posts.map(\.identity) == [42], "the inverse was saved too")
        try reopened.close()
    }
}
