import EventGraph
import EventGraphExamples
import Foundation

/// What `egctl demo` writes: the example blog (`Examples/Blog`'s model) saved through `ModelContainer` in saves
/// of varied size, with title updates and deletes so that history exists.
///
/// Every choice comes from one seeded generator and objects are inserted in the same order, so the same seed
/// gives the same objects, keys and values: the same state digest (commit times are the clock's).
struct DemoWorkload {
    /// Posts to write.
    let postCount: Int
    /// Title updates still to write after every post exists (a long update history, for compaction).
    private(set) var remainingUpdates: Int
    /// Posts written so far (for progress).
    private(set) var postsWritten = 0
    /// Saves made so far.
    private(set) var saveCount = 0

    private var random: SplitMix64
    /// The simulated clock that dates the posts, in seconds since 1970.
    private var clock: Double = 1_767_225_600  // 2026-01-01T00:00:00Z
    private var authors: [ObjectID] = []
    private var tags: [ObjectID] = []
    private var categories: [ObjectID] = []
    /// Live posts, in insertion order (deleted ones are removed).
    private var posts: [ObjectID] = []

    init(posts: Int, updates: Int, seed: UInt64) {
        precondition(posts >= 0 && updates >= 0, "a demo cannot write a negative number of posts or updates")
        self.postCount = posts
        self.remainingUpdates = updates
        self.random = SplitMix64(seed: seed)
    }

    /// The tags and categories of a small store; larger stores add numbered ones.
    static let tagNames = ["swift", "linux", "databases", "performance", "testing", "design", "concurrency", "tools"]
    static let categoryNames = ["engineering", "news", "tutorials", "opinion"]
    static let words = [
        "swift", "linux", "event", "graph", "store", "replay", "snapshot", "context", "fault", "durable", "commit",
        "the", "a", "of", "and", "to", "in", "is", "for", "with", "log", "frame", "object", "relationship", "inverse",
        "author", "post", "tag", "category", "compaction", "checkpoint", "query", "index", "model", "migration",
    ]

    /// How many times larger saves are than in a store of up to 20,000 posts (50 for a million).
    ///
    /// Every save that adds posts to a tag writes the tag's whole list of posts again (a changed row is a new
    /// row), and the eight tags are shared by every post, so the cost of a save grows with the store; larger
    /// saves keep a million posts well under a minute.
    var batchScale: Int { max(1, postCount / 20_000) }

    /// Whether another save remains.
    var isFinished: Bool {
        saveCount > 0 && postsWritten == postCount && (remainingUpdates == 0 || posts.isEmpty)
    }

    /// Makes the next save in `context`, then resets it: the objects of earlier saves are released, so memory
    /// stays flat for any post count (only IDs are kept from one save to the next).
    mutating func saveNext(in context: ObjectContext) throws(EventGraphError) {
        precondition(!isFinished, "the demo has written everything")
        defer { context.reset() }
        clock += Double(1 + random.below(120))
        if saveCount == 0 {
            try insertAuthorsTagsAndCategories(in: context)
        } else if postsWritten < postCount {
            try insertPostsWithHistory(in: context)
        } else {
            try updateTitles(in: context)
        }
        saveCount += 1
    }

    /// The first save: the authors (one per 50 posts, from 3 to 200), the tags and the categories.
    private mutating func insertAuthorsTagsAndCategories(in context: ObjectContext) throws(EventGraphError) {
        let newAuthors = (1...max(3, min(200, postCount / 50))).map { index in
            let author = Author()
            context.insert(author)
            author.identity = Int64(index)
            author.name = "Author \(index)"
            author.email = "author\(index)@blog.example.com"
            author.about = sentence(12)
            return author
        }
        let newTags = Self.tagNames.map { name in
            let tag = Tag()
            context.insert(tag)
            tag.name = name
            return tag
        }
        let newCategories = Self.categoryNames.map { name in
            let category = Category()
            context.insert(category)
            category.name = name
            return category
        }
        try context.save()
        authors = newAuthors.map(\.objectID)
        tags = newTags.map(\.objectID)
        categories = newCategories.map(\.objectID)
    }

    /// A save of posts, mostly 1–20 and sometimes hundreds (times ``batchScale``), with title updates of earlier
    /// posts and now and then a delete.
    private mutating func insertPostsWithHistory(in context: ObjectContext) throws(EventGraphError) {
        let largest = max(20, min(1000, postCount / 20))
        let size = random.below(20) == 0 ? largest / 2 + random.below(largest / 2 + 1) : 1 + random.below(20)
        // The shared objects once per save, not once per post.
        let targets = Targets(
            authors: context.fetch(Author.self, ids: authors), tags: context.fetch(Tag.self, ids: tags),
            categories: context.fetch(Category.self, ids: categories))
        var inserted: [Post] = []
        for _ in 0..<min(size * batchScale, postCount - postsWritten) {
            inserted.append(insertPost(in: context, targets: targets))
        }
        if !posts.isEmpty {
            for _ in 0..<random.below(4) {
                let post = post(at: random.below(posts.count), in: context)
                post.title = title()
            }
            if random.below(5) == 0, posts.count > 10 {
                let deleted: Post = object(posts.remove(at: random.below(posts.count)), in: context)
                context.delete(deleted)
            }
        }
        try context.save()
        posts += inserted.map(\.objectID)
    }

    /// The authors, tags and categories as objects of the current save's context.
    private struct Targets {
        var authors: [Author]
        var tags: [Tag]
        var categories: [Category]
    }

    private mutating func insertPost(in context: ObjectContext, targets: Targets) -> Post {
        postsWritten += 1
        let post = Post()
        context.insert(post)
        post.identity = Int64(postsWritten)
        post.title = title()
        post.body = sentence(45)
        post.excerpt = String(post.body.prefix(80))
        post.date = Date(timeIntervalSince1970: clock)
        post.url = "https://blog.example.com/\(postsWritten)/\(sentence(3).replacingSpaces)"
        post.authoredBy = targets.authors[random.below(targets.authors.count)]
        var postTags: Set<Tag> = []
        for _ in 0..<(1 + random.below(3)) { postTags.insert(targets.tags[random.below(targets.tags.count)]) }
        post.tags = postTags
        post.categories = [targets.categories[random.below(targets.categories.count)]]
        return post
    }

    /// An update-only save of 1–200 titles.
    private mutating func updateTitles(in context: ObjectContext) throws(EventGraphError) {
        for _ in 0..<min(remainingUpdates, 1 + random.below(200)) {
            let post = post(at: random.below(posts.count), in: context)
            post.title = title()
            remainingUpdates -= 1
        }
        try context.save()
    }

    private func post(at index: Int, in context: ObjectContext) -> Post {
        object(posts[index], in: context)
    }

    /// The object of a saved ID; the demo never deletes what it still refers to.
    private func object<T: ManagedObject>(_ id: ObjectID, in context: ObjectContext) -> T {
        guard let object = context.object(with: id) as? T else {
            preconditionFailure("the demo lost its own \(T.self) \(id)")
        }
        return object
    }

    private mutating func sentence(_ count: Int) -> String {
        var text = ""
        text.reserveCapacity(count * 8)
        for index in 0..<count {
            if index > 0 { text += " " }
            text += Self.words[random.below(Self.words.count)]
        }
        return text
    }

    private mutating func title() -> String {
        let text = sentence(6)
        return text.prefix(1).uppercased() + text.dropFirst()
    }
}

extension String {
    fileprivate var replacingSpaces: String { String(map { $0 == " " ? "-" : $0 }) }
}
