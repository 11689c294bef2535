public import EventGraph
public import Foundation

// Seed 000: a blog library with Author, Post, Tag and Category (Core Data's CDAuthor, CDPost, CDTag, CDCategory).
// The one blog model: this example app, `egctl demo` and the benchmarks (`Benchmarks/Sources/Workload`) all use
// these classes, so a store written by any of them opens with the others. Where the seed stores a date as a
// string, the model keeps a `Date`, indexed, so posts can be sorted and fetched by date without a scan.

/// A blog author; `identity` is the key the remote API uses.
public final class Author: ManagedObject {
    @Attribute(.unique) public var identity: Int64 = 0
    @Attribute public var name: String = ""
    @Attribute(.pattern("[^@ ]+@[^@ ]+|")) public var email: String = ""
    @Attribute public var about: String = ""
    @Relationship(inverse: "authoredBy", deleteRule: .cascade) public var posts: Set<Post>
}

/// A blog post.
public final class Post: ManagedObject {
    @Attribute(.unique) public var identity: Int64 = 0
    @Attribute(.length(1...)) public var title: String = "Untitled"
    @Attribute public var body: String = ""
    @Attribute(.indexed) public var date: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute public var excerpt: String = ""
    @Attribute public var url: String = ""
    @Attribute public var fullCoverageImageURL: String = ""
    @Attribute public var thumbnailCoverageImageURL: String = ""
    @Relationship(inverse: "posts") public var authoredBy: Author?
    @Relationship(inverse: "posts") public var tags: Set<Tag>
    @Relationship(inverse: "posts") public var categories: Set<Category>
}

/// A tag; many posts share a tag (many-to-many).
public final class Tag: ManagedObject {
    @Attribute(.unique) public var name: String = ""
    @Relationship public var posts: Set<Post>
}

/// A category; many posts share a category (many-to-many).
public final class Category: ManagedObject {
    @Attribute(.unique) public var name: String = ""
    @Relationship public var posts: Set<Post>
}
