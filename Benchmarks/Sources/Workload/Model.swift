public import EventGraph
import Foundation

// Seed 000's blog model, reduced to what the benchmarks exercise: Post (Int64 identity, title, body, excerpt,
// url, date) with a to-one Author and many-to-many Tags. The SQLite schema in `SQLiteSchema.swift` mirrors it
// table for table and index for index.

/// A blog author.
public final class Author: ManagedObject {
    @Attribute(.unique) public var identity: Int64 = 0
    @Attribute public var name: String = ""
    @Attribute public var email: String = ""
    @Relationship(inverse: "author", deleteRule: .cascade) public var posts: Set<Post>
}

/// A blog post.
public final class Post: ManagedObject {
    @Attribute(.unique) public var identity: Int64 = 0
    @Attribute public var title: String = ""
    @Attribute public var body: String = ""
    @Attribute public var excerpt: String = ""
    @Attribute public var url: String = ""
    @Attribute(.indexed) public var date: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Relationship(inverse: "posts") public var author: Author?
    @Relationship(inverse: "posts") public var tags: Set<Tag>
}

/// A tag; many posts share a tag and a post has several.
public final class Tag: ManagedObject {
    @Attribute(.unique) public var name: String = ""
    @Relationship(inverse: "tags") public var posts: Set<Post>
}

/// The EventGraph model of the workload.
public enum WorkloadModel {
    public static let model: ObjectModel = {
        do {
            return try ObjectModel(name: "BenchmarkBlog", version: "1", types: [Author.self, Post.self, Tag.self])
        } catch {
            fatalError("the benchmark model is invalid: \(error)")
        }
    }()
}
