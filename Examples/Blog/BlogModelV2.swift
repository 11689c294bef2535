public import EventGraph
public import Foundation

/// Version 2 of the blog model, for migration examples and the migration benchmark: a post's `title` is renamed
/// `headline` (declared with its original name) and posts gain a `wordCount` with a default. A version 1 store
/// (``BlogLibrary/model``, what `egctl demo` writes) opens with it by inferred migration, history kept.
public enum BlogV2 {
    public final class Author: ManagedObject {
        override public class var entityName: String { "Author" }
        @Attribute(.unique) public var identity: Int64 = 0
        @Attribute public var name: String = ""
        @Attribute(.pattern("[^@ ]+@[^@ ]+|")) public var email: String = ""
        @Attribute public var about: String = ""
        @Relationship(inverse: "authoredBy", deleteRule: .cascade) public var posts: Set<Post>
    }

    public final class Post: ManagedObject {
        override public class var entityName: String { "Post" }
        @Attribute(.unique) public var identity: Int64 = 0
        @Attribute(.length(1...), .originalName("title")) public var headline: String = "Untitled"
        @Attribute public var body: String = ""
        @Attribute(.indexed) public var date: Date = Date(timeIntervalSinceReferenceDate: 0)
        @Attribute public var excerpt: String = ""
        @Attribute public var url: String = ""
        @Attribute public var fullCoverageImageURL: String = ""
        @Attribute public var thumbnailCoverageImageURL: String = ""
        @Attribute public var wordCount: Int64 = -1
        @Relationship(inverse: "posts") public var authoredBy: Author?
        @Relationship(inverse: "posts") public var tags: Set<Tag>
        @Relationship(inverse: "posts") public var categories: Set<Category>
    }

    public final class Tag: ManagedObject {
        override public class var entityName: String { "Tag" }
        @Attribute(.unique) public var name: String = ""
        @Relationship public var posts: Set<Post>
    }

    public final class Category: ManagedObject {
        override public class var entityName: String { "Category" }
        @Attribute(.unique) public var name: String = ""
        @Relationship public var posts: Set<Post>
    }

    /// The model, version 2.
    public static let model: ObjectModel = {
        do {
            return try ObjectModel(
                name: "Blog", version: "2", types: [Author.self, Post.self, Tag.self, Category.self])
        } catch {
            fatalError("the blog version 2 model is invalid: \(error)")
        }
    }()
}
