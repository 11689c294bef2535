public import EventGraph
public import Foundation

/// A post as the remote API delivers it (the seed's `Post` value passed to `postWithPost:inManagedObjectContext:`).
public struct PostRecord: Sendable, Hashable {
    public var identity: Int64
    public var title: String
    public var body: String
    public var date: Date
    public var excerpt: String
    public var url: String
    public var author: AuthorRecord
    public var tags: [String]
    public var categories: [String]

    public init(
        identity: Int64, title: String, body: String = "", date: Date = Date(timeIntervalSinceReferenceDate: 0),
        excerpt: String = "", url: String = "",
        author: AuthorRecord, tags: [String] = [], categories: [String] = []
    ) {
        self.identity = identity
        self.title = title
        self.body = body
        self.date = date
        self.excerpt = excerpt
        self.url = url
        self.author = author
        self.tags = tags
        self.categories = categories
    }
}

/// An author as the remote API delivers it.
public struct AuthorRecord: Sendable, Hashable {
    public var identity: Int64
    public var name: String
    public var email: String

    public init(identity: Int64, name: String, email: String = "") {
        self.identity = identity
        self.name = name
        self.email = email
    }
}

/// The seed's `CoreDataControl`: the model and the operations the app performs.
public enum BlogLibrary {
    /// The blog model, version 1.
    public static let model: ObjectModel = {
        do {
            return try ObjectModel(
                name: "Blog", version: "1", types: [Author.self, Post.self, Tag.self, Category.self])
        } catch {
            fatalError("the blog model is invalid: \(error)")
        }
    }()

    /// Opens (or creates) a blog store.
    public static func open(path: String) throws(EventGraphError) -> ModelContainer {
        try ModelContainer(path: path, model: model)
    }

    /// Finds or creates the post with the record's identity and brings it up to date (the seed's
    /// `postWithPost:inManagedObjectContext:`); the author, tags and categories are found or created too.
    ///
    /// - Throws: ``EventGraphError`` when a lookup cannot read the store (see
    ///   ``ObjectContext/fetchOrInsert(_:unique:equals:configure:)``).
    @discardableResult
    public static func post(with record: PostRecord, in context: ObjectContext) throws(EventGraphError) -> Post {
        let post = try context.fetchOrInsert(Post.self, unique: \.identity, equals: record.identity)
        post.title = record.title
        post.body = record.body
        post.date = record.date
        post.excerpt = record.excerpt
        post.url = record.url
        let author = try context.fetchOrInsert(Author.self, unique: \.identity, equals: record.author.identity)
        author.name = record.author.name
        author.email = record.author.email
        post.authoredBy = author
        var tags: Set<Tag> = []
        for name in record.tags { tags.insert(try context.fetchOrInsert(Tag.self, unique: \.name, equals: name)) }
        post.tags = tags
        var categories: Set<Category> = []
        for name in record.categories {
            categories.insert(try context.fetchOrInsert(Category.self, unique: \.name, equals: name))
        }
        post.categories = categories
        return post
    }

    /// Deletes the post with an identity, if there is one; returns whether one was deleted.
    @discardableResult
    public static func deletePost(identity: Int64, in context: ObjectContext) throws(EventGraphError) -> Bool {
        let posts = try context.fetch(FetchDescriptor<Post>(filter: .equal("identity", .int64(identity))))
        posts.forEach(context.delete)
        return !posts.isEmpty
    }

    /// Every post, newest identity first.
    public static func allPosts(in context: ObjectContext) throws(EventGraphError) -> [Post] {
        try context.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.identity, order: .reverse)]))
    }
}
