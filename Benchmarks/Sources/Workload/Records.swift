import Foundation
public import GRDB

// GRDB records for the same model (the example blog app's `Author`, `Post`, `Tag` and `Category`, column for
// attribute and type for type), written the way GRDB's documentation recommends for speed: `FetchableRecord`
// with `init(row:)` reading columns by index-free names, `PersistableRecord` with `encode(to:)` (GRDB caches the
// statements of `insert`, `update` and `fetchOne(key:)` itself).

/// A row of `author`.
public struct AuthorRecord: FetchableRecord, PersistableRecord, Sendable {
    public static let databaseTableName = "author"
    public var id: Int64
    public var name: String
    public var email: String
    public var about: String

    public init(id: Int64, name: String, email: String, about: String = "") {
        self.id = id
        self.name = name
        self.email = email
        self.about = about
    }

    public init(row: Row) {
        id = row["id"]
        name = row["name"]
        email = row["email"]
        about = row["about"]
    }

    public func encode(to container: inout PersistenceContainer) {
        container["id"] = id
        container["name"] = name
        container["email"] = email
        container["about"] = about
    }
}

/// A row of `post`; `id` is the post's Int64 identity (SQLite's rowid, so lookups by identity use the primary key).
public struct PostRecord: FetchableRecord, PersistableRecord, Sendable {
    public static let databaseTableName = "post"
    public var id: Int64
    public var title: String
    public var body: String
    public var excerpt: String
    public var url: String
    public var fullCoverageImageURL: String
    public var thumbnailCoverageImageURL: String
    /// Seconds since 2001-01-01, as EventGraph stores a `Date` (GRDB's default text format would be larger).
    public var date: Double
    public var authorId: Int64

    public init(
        id: Int64, title: String, body: String, excerpt: String, url: String, fullCoverageImageURL: String = "",
        thumbnailCoverageImageURL: String = "", date: Double, authorId: Int64
    ) {
        self.id = id
        self.title = title
        self.body = body
        self.excerpt = excerpt
        self.url = url
        self.fullCoverageImageURL = fullCoverageImageURL
        self.thumbnailCoverageImageURL = thumbnailCoverageImageURL
        self.date = date
        self.authorId = authorId
    }

    public init(row: Row) {
        id = row["id"]
        title = row["title"]
        body = row["body"]
        excerpt = row["excerpt"]
        url = row["url"]
        fullCoverageImageURL = row["fullCoverageImageURL"]
        thumbnailCoverageImageURL = row["thumbnailCoverageImageURL"]
        date = row["date"]
        authorId = row["authorId"]
    }

    public func encode(to container: inout PersistenceContainer) {
        container["id"] = id
        container["title"] = title
        container["body"] = body
        container["excerpt"] = excerpt
        container["url"] = url
        container["fullCoverageImageURL"] = fullCoverageImageURL
        container["thumbnailCoverageImageURL"] = thumbnailCoverageImageURL
        container["date"] = date
        container["authorId"] = authorId
    }
}

/// A row of `tag`.
public struct TagRecord: FetchableRecord, PersistableRecord, Sendable {
    public static let databaseTableName = "tag"
    public var id: Int64
    public var name: String

    public init(id: Int64, name: String) {
        self.id = id
        self.name = name
    }

    public init(row: Row) {
        id = row["id"]
        name = row["name"]
    }

    public func encode(to container: inout PersistenceContainer) {
        container["id"] = id
        container["name"] = name
    }
}

/// A row of `postTag`, the many-to-many join table.
public struct PostTagRecord: FetchableRecord, PersistableRecord, Sendable {
    public static let databaseTableName = "postTag"
    public var postId: Int64
    public var tagId: Int64

    public init(postId: Int64, tagId: Int64) {
        self.postId = postId
        self.tagId = tagId
    }

    public init(row: Row) {
        postId = row["postId"]
        tagId = row["tagId"]
    }

    public func encode(to container: inout PersistenceContainer) {
        container["postId"] = postId
        container["tagId"] = tagId
    }
}

/// The SQLite schema of the example blog model, with indexes equivalent to EventGraph's: the unique identities
/// (primary keys), the unique tag and category names, the indexed `date`, and both directions of every
/// relationship (EventGraph keeps inverses, so a post's author and an author's posts, a post's tags and a tag's
/// posts are all direct lookups). The workload leaves categories empty, as it does on EventGraph.
public enum SQLiteSchema {
    public static func create(_ db: Database) throws {
        try db.create(table: "author") { table in
            table.primaryKey("id", .integer)
            table.column("name", .text).notNull()
            table.column("email", .text).notNull()
            table.column("about", .text).notNull()
        }
        try db.create(table: "post") { table in
            table.primaryKey("id", .integer)
            table.column("title", .text).notNull()
            table.column("body", .text).notNull()
            table.column("excerpt", .text).notNull()
            table.column("url", .text).notNull()
            table.column("fullCoverageImageURL", .text).notNull()
            table.column("thumbnailCoverageImageURL", .text).notNull()
            table.column("date", .double).notNull().indexed()
            table.column("authorId", .integer).notNull().indexed().references("author", onDelete: .cascade)
        }
        try db.create(table: "tag") { table in
            table.primaryKey("id", .integer)
            table.column("name", .text).notNull().unique()
        }
        try db.create(table: "postTag") { table in
            table.column("postId", .integer).notNull().references("post", onDelete: .cascade)
            table.column("tagId", .integer).notNull().indexed().references("tag", onDelete: .cascade)
            table.primaryKey(["postId", "tagId"])
        }
        try db.create(table: "category") { table in
            table.primaryKey("id", .integer)
            table.column("name", .text).notNull().unique()
        }
        try db.create(table: "postCategory") { table in
            table.column("postId", .integer).notNull().references("post", onDelete: .cascade)
            table.column("categoryId", .integer).notNull().indexed().references("category", onDelete: .cascade)
            table.primaryKey(["postId", "categoryId"])
        }
    }
}
