import EventGraph
import Foundation

/// Blog version 2 with one more rule, `Post.wordCount` at least 0: the attribute is added with the default -1, so
/// every migrated post breaks it. `StoreProbe migrate-blog-dry-strict` measures a dry run that finds a failure in
/// every post (BENCHMARKS.md).
enum BlogV2Strict {
    final class Author: ManagedObject {
        override class var entityName: String { "Author" }
        @Attribute(.unique) var identity: Int64 = 0
        @Attribute var name: String = ""
        @Attribute(.pattern("[^@ ]+@[^@ ]+|")) var email: String = ""
        @Attribute var about: String = ""
        @Relationship(inverse: "authoredBy", deleteRule: .cascade) var posts: Set<Post>
    }

    final class Post: ManagedObject {
        override class var entityName: String { "Post" }
        @Attribute(.unique) var identity: Int64 = 0
        @Attribute(.length(1...), .originalName("title")) var headline: String = "Untitled"
        @Attribute var body: String = ""
        @Attribute(.indexed) var date: Date = Date(timeIntervalSinceReferenceDate: 0)
        @Attribute var excerpt: String = ""
        @Attribute var url: String = ""
        @Attribute var fullCoverageImageURL: String = ""
        @Attribute var thumbnailCoverageImageURL: String = ""
        @Attribute(.minimum(0)) var wordCount: Int64 = -1
        @Relationship(inverse: "posts") var authoredBy: Author?
        @Relationship(inverse: "posts") var tags: Set<Tag>
        @Relationship(inverse: "posts") var categories: Set<Category>
    }

    final class Tag: ManagedObject {
        override class var entityName: String { "Tag" }
        @Attribute(.unique) var name: String = ""
        @Relationship var posts: Set<Post>
    }

    final class Category: ManagedObject {
        override class var entityName: String { "Category" }
        @Attribute(.unique) var name: String = ""
        @Relationship var posts: Set<Post>
    }

    static let model = try! ObjectModel(
        name: "Blog", version: "2", types: [Author.self, Post.self, Tag.self, Category.self])
}
