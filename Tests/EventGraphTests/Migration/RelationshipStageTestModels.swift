import EventGraph
import Foundation

/// Version 1 of a blog whose posts hold their text, written by an author and tagged.
enum WritingV1 {
    final class Author: ManagedObject {
        override class var entityName: String { "Author" }
        @Attribute var name: String = ""
        @Relationship(inverse: "author") var posts: Set<Post>
    }

    final class Tag: ManagedObject {
        override class var entityName: String { "Tag" }
        @Attribute var label: String = ""
        @Relationship(inverse: "tags") var posts: Set<Post>
    }

    final class Post: ManagedObject {
        override class var entityName: String { "Post" }
        @Attribute var title: String = ""
        @Attribute var body: String = ""
        @Relationship(inverse: "posts") var author: Author?
        @Relationship(inverse: "posts") var tags: Set<Tag>
    }

    static let model = try! ObjectModel(
        name: "Writing", version: "1", types: [Author.self, Tag.self, Post.self])
}

/// Version 2: the post split in two — its text moves into a `Text` related to the post and to the author (its
/// writer); the post gains an `editor` (the author, through a second relationship) and a `tagCount` computed from
/// its old tags. `Post.author` and the tags are inferred.
enum WritingV2 {
    final class Author: ManagedObject {
        override class var entityName: String { "Author" }
        @Attribute var name: String = ""
        @Relationship(inverse: "author") var posts: Set<Post>
        @Relationship(inverse: "editor") var edited: Set<Post>
        @Relationship(inverse: "writer") var texts: Set<Text>
    }

    final class Tag: ManagedObject {
        override class var entityName: String { "Tag" }
        @Attribute var label: String = ""
        @Relationship(inverse: "tags") var posts: Set<Post>
    }

    final class Post: ManagedObject {
        override class var entityName: String { "Post" }
        @Attribute var title: String = ""
        @Attribute var tagCount: Int64 = 0
        @Relationship(inverse: "posts") var author: Author?
        @Relationship(inverse: "edited") var editor: Author?
        @Relationship(inverse: "posts") var tags: Set<Tag>
        @Relationship(inverse: "post") var text: Text?
    }

    final class Text: ManagedObject {
        override class var entityName: String { "Text" }
        @Attribute var body: String = ""
        @Relationship(inverse: "text") var post: Post?
        @Relationship(inverse: "texts") var writer: Author?
    }

    static let model = try! ObjectModel(
        name: "Writing", version: "2", types: [Author.self, Tag.self, Post.self, Text.self])

    /// Version 1 → 2, with code that reads the old post's relationships and writes the new ones.
    static let stage = MigrationStage.custom(
        to: model,
        [
            EntityMigration(
                entity: "Post", computing: ["tagCount", "editor", "text", "Text.body", "Text.writer"]
            ) { old, new in
                new.setValue(.int64(Int64(old.relatedObjects(forKey: "tags").count)), forKey: "tagCount")
                new.setRelationship(to: old.relatedObject(forKey: "author"), forKey: "editor")
                new.setRelatedObject(
                    ["body": old.value(forKey: "body") ?? .null],
                    relating: ["writer": old.relatedObjects(forKey: "author")], forKey: "text")
            }
        ])

    static let plan = MigrationPlan(from: WritingV1.model, stages: [stage])
}

/// The transactions of a version 1 writing store, and what they leave.
struct WritingStore {
    /// The transaction after which post 0 is by ann with tags a and b, post 1 by bob tagged c, post 2 by ann.
    var early: UInt64 = 0
    var last: UInt64 = 0

    /// Writes it: authors ann and bob and tags a, b, c; posts 0 (ann; a, b), 1 (bob; c) and 2 (ann); then post 0
    /// moves to bob and gains tag c, post 1's body is edited; post 2 is deleted; a third author, cy, takes post 1.
    /// With `compactingAfter`, the store is compacted after that many of these steps (a checkpoint in the old log).
    @discardableResult
    static func write(at path: String, compactingAfter compaction: Int? = nil) throws -> WritingStore {
        var store = WritingStore()
        let container = try ModelContainer(path: path, model: WritingV1.model)
        let context = container.newBackgroundContext(name: "writer")
        var step = 0
        func save() throws {
            try context.save()
            step += 1
            if step == compaction { try container.compact() }
        }
        let ann = WritingV1.Author()
        let bob = WritingV1.Author()
        context.insert(ann)
        context.insert(bob)
        ann.name = "ann"
        bob.name = "bob"
        let tags = ["a", "b", "c"].map { label in
            let tag = WritingV1.Tag()
            context.insert(tag)
            tag.label = label
            return tag
        }
        try save()
        var posts: [WritingV1.Post] = []
        for (index, author) in [ann, bob, ann].enumerated() {
            let post = WritingV1.Post()
            context.insert(post)
            post.title = "post \(index)"
            post.body = "body \(index)"
            post.author = author
            posts.append(post)
        }
        posts[0].tags = [tags[0], tags[1]]
        posts[1].tags = [tags[2]]
        try save()
        store.early = container.lastTransactionID
        posts[0].author = bob
        posts[0].tags.insert(tags[2])
        posts[1].body = "edited"
        try save()
        context.delete(posts[2])
        try save()
        let cy = WritingV1.Author()
        context.insert(cy)
        cy.name = "cy"
        posts[1].author = cy
        try save()
        store.last = container.lastTransactionID
        try container.close()
        return store
    }
}

/// Version 1 of an office: a person sits at a desk (one to one).
enum OfficeV1 {
    final class Person: ManagedObject {
        override class var entityName: String { "Person" }
        @Attribute var name: String = ""
        @Relationship(inverse: "occupant") var desk: Desk?
    }

    final class Desk: ManagedObject {
        override class var entityName: String { "Desk" }
        @Attribute var label: String = ""
        @Relationship(inverse: "desk") var occupant: Person?
    }

    static let model = try! ObjectModel(name: "Office", version: "1", types: [Person.self, Desk.self])
}

/// Version 2: the seat is set by a custom stage from the old desk (a one-to-one the code writes both sides of).
enum OfficeV2 {
    final class Person: ManagedObject {
        override class var entityName: String { "Person" }
        @Attribute var name: String = ""
        @Relationship(inverse: "sitter") var seat: Desk?
    }

    final class Desk: ManagedObject {
        override class var entityName: String { "Desk" }
        @Attribute var label: String = ""
        @Relationship(inverse: "seat") var sitter: Person?
    }

    static let model = try! ObjectModel(name: "Office", version: "2", types: [Person.self, Desk.self])

    static let plan = MigrationPlan(
        from: OfficeV1.model,
        stages: [
            .custom(
                to: model,
                [
                    EntityMigration(entity: "Person", computing: ["seat"]) { old, new in
                        new.setRelationship(to: old.relatedObject(forKey: "desk"), forKey: "seat")
                    }
                ])
        ])
}
