import EventGraph
import EventGraphExamples
import Foundation

/// The scenarios on EventGraph, through its public API only: the example blog app's `ManagedObject` classes
/// (`Examples/Blog`, the model `egctl demo` writes too), contexts, `save()`, `FetchDescriptor` with `#Predicate`,
/// `object(with:)` and `ModelContainer.compact()`. Posts get an author and tags; their categories, cover image
/// URLs and authors' `about` stay empty (GRDB's rows hold the same empty values).
public final class EventGraphEngine: StoreEngine {
    public static let name = "EventGraph"

    public static func storeFiles(at path: String) -> [String] {
        [path, path + ".lock", path + ".previous"].filter { FileManager.default.fileExists(atPath: $0) }
    }

    static func configuration(_ durability: DurabilityMode) -> ModelContainer.Configuration {
        ModelContainer.Configuration(durability: durability == .durable ? .full : .normal)
    }

    /// Inserts the world's authors and tags into `context`.
    static func insertWorld(_ world: World, into context: ObjectContext) -> (authors: [Author], tags: [Tag]) {
        let authors = world.authors.map { data in
            let author = Author()
            context.insert(author)
            author.identity = data.identity
            author.name = data.name
            author.email = data.email
            return author
        }
        let tags = world.tags.map { name in
            let tag = Tag()
            context.insert(tag)
            tag.name = name
            return tag
        }
        return (authors, tags)
    }

    /// Inserts one post with its author and tags.
    @inline(__always)
    static func insert(_ data: PostData, into context: ObjectContext, authors: [Author], tags: [Tag]) {
        let post = Post()
        context.insert(post)
        post.identity = data.identity
        post.title = data.title
        post.body = data.body
        post.excerpt = data.excerpt
        post.url = data.url
        post.date = Date(timeIntervalSinceReferenceDate: data.date)
        post.authoredBy = authors[data.authorIndex]
        post.tags = Set(data.tagIndices.map { tags[$0] })
    }

    /// Creates a store holding the world; returns the IDs of its authors and tags.
    static func createWorld(path: String, world: World, durability: DurabilityMode) throws
        -> (ModelContainer, authors: [ObjectID], tags: [ObjectID])
    {
        let container = try ModelContainer(
            path: path, model: BlogLibrary.model, configuration: configuration(durability))
        let context = container.newBackgroundContext()
        let (authors, tags) = insertWorld(world, into: context)
        try context.save()
        return (container, authors.map(\.objectID), tags.map(\.objectID))
    }

    public static func bulkInsert(path: String, posts: [PostData], world: World) throws -> Double {
        let container = try ModelContainer(path: path, model: BlogLibrary.model, configuration: configuration(.durable))
        defer { try? container.close() }
        return try measureSeconds {
            let context = container.newBackgroundContext()
            let (authors, tags) = insertWorld(world, into: context)
            for data in posts { insert(data, into: context, authors: authors, tags: tags) }
            try context.save()
        }
    }

    public static func singleSaves(path: String, posts: [PostData], world: World, durability: DurabilityMode) throws
        -> Double
    {
        let (container, authorIDs, tagIDs) = try createWorld(path: path, world: world, durability: durability)
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let authors = context.fetch(Author.self, ids: authorIDs)
        let tags = context.fetch(Tag.self, ids: tagIDs)
        return try measureSeconds {
            for data in posts {
                insert(data, into: context, authors: authors, tags: tags)
                try context.save()
            }
        }
    }

    public static func concurrentWriters(path: String, batches: [[PostData]], world: World) throws -> Double {
        let (container, authorIDs, tagIDs) = try createWorld(path: path, world: world, durability: .durable)
        defer { try? container.close() }
        return try runWriterThreads(count: batches.count) { index in
            // The context and its objects never leave this thread.
            let context = container.newBackgroundContext(name: "writer \(index)")
            let authors = context.fetch(Author.self, ids: authorIDs)
            let tags = context.fetch(Tag.self, ids: tagIDs)
            return {
                for data in batches[index] {
                    insert(data, into: context, authors: authors, tags: tags)
                    try context.save()
                }
            }
        }
    }

    public static func build(path: String, generator: PostGenerator, count: Int, batchSize: Int) throws {
        let (container, authorIDs, tagIDs) = try createWorld(path: path, world: generator.world, durability: .relaxed)
        defer { try? container.close() }
        for start in stride(from: 0, to: count, by: batchSize) {
            let context = container.newBackgroundContext()
            let authors = context.fetch(Author.self, ids: authorIDs)
            let tags = context.fetch(Tag.self, ids: tagIDs)
            for index in start..<min(count, start + batchSize) {
                insert(generator.post(at: index), into: context, authors: authors, tags: tags)
            }
            try context.save()
        }
    }

    public static func updateTitles(path: String, generator: PostGenerator, count: Int, batchSize: Int) throws {
        let container = try ModelContainer(path: path, model: BlogLibrary.model, configuration: configuration(.relaxed))
        defer { try? container.close() }
        var ids: [Int64: ObjectID] = [:]
        do {
            let context = container.newBackgroundContext()
            for post in try context.fetch(FetchDescriptor<Post>()) { ids[post.identity] = post.objectID }
        }
        for start in stride(from: 0, to: count, by: batchSize) {
            let context = container.newBackgroundContext()
            let range = start..<min(count, start + batchSize)
            let posts = context.fetch(Post.self, ids: range.map { ids[Int64($0 + 1)]! })
            for (index, post) in zip(range, posts) {
                post.title = generator.updatedTitle(ofPostAt: index, generation: 1)
            }
            try context.save()
        }
    }

    public static func compact(path: String) throws -> Double {
        let container = try ModelContainer(path: path, model: BlogLibrary.model, configuration: configuration(.durable))
        defer { try? container.close() }
        return try measureSeconds { try container.compact() }
    }

    public static func openAndFirstFetch(path: String, identity: Int64) throws -> (seconds: Double, title: String) {
        var title = ""
        var opened: ModelContainer?
        let seconds = try measureSeconds {
            let container = try ModelContainer(
                path: path, model: BlogLibrary.model, configuration: configuration(.durable))
            opened = container
            let context = container.newBackgroundContext()
            // A run-time filter on the unique identity is answered from the uniqueness index (documented).
            let posts = try context.fetch(FetchDescriptor<Post>(filter: .equal("identity", .int64(identity))))
            title = posts.first?.title ?? ""
        }
        try opened?.close()
        return (seconds, title)
    }

    public static func openOnly(path: String) throws -> Double {
        var opened: ModelContainer?
        let seconds = try measureSeconds {
            opened = try ModelContainer(path: path, model: BlogLibrary.model, configuration: configuration(.durable))
        }
        try opened?.close()
        return seconds
    }

    public static func openAndFetchAll(path: String) throws -> ReadResult {
        var checksum = 0
        var opened: ModelContainer?
        var posts: [Post] = []
        let seconds = try measureSeconds {
            let container = try ModelContainer(
                path: path, model: BlogLibrary.model, configuration: configuration(.durable))
            opened = container
            let context = container.newBackgroundContext()
            posts = try context.fetch(FetchDescriptor<Post>())
            checksum = Self.checksum(of: posts)
        }
        withExtendedLifetime(posts) {}
        try opened?.close()
        return ReadResult(seconds: seconds, checksum: checksum)
    }

    /// Reads every attribute of every post (fetch-all and memory-fetch-all).
    static func checksum(of posts: [Post]) -> Int {
        var checksum = 0
        for post in posts {
            checksum &+= Int(post.identity) &+ Int(post.date.timeIntervalSinceReferenceDate)
            checksum &+= post.title.utf8.count &+ post.body.utf8.count &+ post.excerpt.utf8.count
            checksum &+= post.url.utf8.count
        }
        return checksum
    }

    public static func settle(path: String) throws {}

    // MARK: - Reads

    let container: ModelContainer
    /// The ObjectID of each post by identity (what an application keeps to fetch by ID).
    let idsByIdentity: [Int64: ObjectID]
    /// Whether the predicate scenarios use run-time `FetchFilter`s instead of `#Predicate` (a note in reports).
    public var usesRuntimeFilters = false

    public init(readingStoreAt path: String) throws {
        container = try ModelContainer(
            path: path, model: BlogLibrary.model, configuration: Self.configuration(.relaxed))
        var ids: [Int64: ObjectID] = [:]
        let context = container.newBackgroundContext()
        for post in try context.fetch(FetchDescriptor<Post>()) { ids[post.identity] = post.objectID }
        idsByIdentity = ids
    }

    public func fetchAll() throws -> ReadResult {
        var checksum = 0
        let seconds = try measureSeconds {
            let context = container.newBackgroundContext()
            // The results go before the context (as when they are iterated in the closure): a context released
            // while its results are held detaches each of them, which is not what this scenario measures.
            let posts = try context.fetch(FetchDescriptor<Post>())
            checksum = Self.checksum(of: posts)
            withExtendedLifetime(context) {}
        }
        return ReadResult(seconds: seconds, checksum: checksum)
    }

    public func fetchByID(_ identities: [Int64]) throws -> ReadResult {
        let ids = identities.map { idsByIdentity[$0]! }
        var checksum = 0
        let seconds = measureSeconds {
            let context = container.newBackgroundContext()
            for id in ids {
                if let post = context.object(with: id) as? Post { mix(&checksum, post.title) }
            }
        }
        return ReadResult(seconds: seconds, checksum: checksum)
    }

    public func fetchEqual(dates: [Double]) throws -> ReadResult {
        try query(dates) { value in
            let date = Date(timeIntervalSinceReferenceDate: value)
            return self.usesRuntimeFilters
                ? FetchDescriptor<Post>(filter: .equal("date", .date(date)))
                : FetchDescriptor<Post>(predicate: #Predicate { $0.date == date })
        }
    }

    public func fetchRange(_ ranges: [ClosedRange<Double>]) throws -> ReadResult {
        try query(ranges) { range in
            let lower = Date(timeIntervalSinceReferenceDate: range.lowerBound)
            let upper = Date(timeIntervalSinceReferenceDate: range.upperBound)
            return self.usesRuntimeFilters
                ? FetchDescriptor<Post>(
                    filter: .and([
                        .compare("date", .greaterOrEqual, .date(lower)),
                        .compare("date", .lessOrEqual, .date(upper)),
                    ]))
                : FetchDescriptor<Post>(predicate: #Predicate { $0.date >= lower && $0.date <= upper })
        }
    }

    public func fetchContaining(_ words: [String]) throws -> ReadResult {
        try query(words) { word in
            self.usesRuntimeFilters
                ? FetchDescriptor<Post>(filter: .compare("title", .contains, .string(word)))
                : FetchDescriptor<Post>(predicate: #Predicate { $0.title.contains(word) })
        }
    }

    /// Runs one fetch per value in one context (as an application screen would), reading each result's title.
    private func query<Value>(_ values: [Value], _ descriptor: (Value) -> FetchDescriptor<Post>) throws -> ReadResult {
        var checksum = 0
        let seconds = try measureSeconds {
            let context = container.newBackgroundContext()
            for value in values {
                for post in try context.fetch(descriptor(value)) { mix(&checksum, post.title) }
            }
        }
        return ReadResult(seconds: seconds, checksum: checksum)
    }

    public func close() throws {
        try container.close()
    }
}
