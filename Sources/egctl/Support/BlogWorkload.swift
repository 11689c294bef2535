import LogFormat

/// Seed 000's blog (Author, Post, Tag, Category) as a schema and a deterministic stream of changesets: inserts in
/// saves of varied size, with updates and deletes so that history exists. Both sides of every relationship change
/// are recorded, as EventGraph records them.
struct BlogWorkload {
    // Entity indices.
    static let author: UInt32 = 0, post: UInt32 = 1, tag: UInt32 = 2, category: UInt32 = 3
    // Property indices.
    enum AuthorProperty: UInt32 { case identity, name, email, about, posts }
    enum PostProperty: UInt32 {
        case identity, title, body, excerpt, date, url, fullCoverageImageURL, thumbnailCoverageImageURL, authoredBy,
            tags, categories
    }
    enum NamedProperty: UInt32 { case name, posts }

    static var schema: SchemaPayload {
        func attribute(_ name: String, _ type: AttributeType, optional: Bool = false) -> PropertySchema {
            .attribute(AttributeSchema(name: name, type: type, isOptional: optional))
        }
        return SchemaPayload(
            modelName: "Blog", versionIdentifier: "1", modelHash: 0x000B_1060_0000_0001,
            entities: [
                EntitySchema(
                    name: "Author",
                    properties: [
                        attribute("identity", .int64), attribute("name", .string), attribute("email", .string),
                        attribute("about", .string, optional: true),
                        .relationship(
                            RelationshipSchema(
                                name: "posts", destinationEntityName: "Post", inverseName: "authoredBy", isToMany: true)
                        ),
                    ], uniquenessConstraints: [["identity"]], indexes: [["identity"]]),
                EntitySchema(
                    name: "Post",
                    properties: [
                        attribute("identity", .int64), attribute("title", .string), attribute("body", .string),
                        attribute("excerpt", .string), attribute("date", .date), attribute("url", .url, optional: true),
                        attribute("fullCoverageImageURL", .url, optional: true),
                        attribute("thumbnailCoverageImageURL", .url, optional: true),
                        .relationship(
                            RelationshipSchema(
                                name: "authoredBy", destinationEntityName: "Author", inverseName: "posts",
                                isToMany: false)),
                        .relationship(
                            RelationshipSchema(
                                name: "tags", destinationEntityName: "Tag", inverseName: "posts", isToMany: true)),
                        .relationship(
                            RelationshipSchema(
                                name: "categories", destinationEntityName: "Category", inverseName: "posts",
                                isToMany: true)),
                    ], uniquenessConstraints: [["identity"]], indexes: [["identity"], ["date"]]),
                EntitySchema(
                    name: "Tag",
                    properties: [
                        attribute("name", .string),
                        .relationship(
                            RelationshipSchema(
                                name: "posts", destinationEntityName: "Post", inverseName: "tags", isToMany: true)),
                    ], uniquenessConstraints: [["name"]]),
                EntitySchema(
                    name: "Category",
                    properties: [
                        attribute("name", .string),
                        .relationship(
                            RelationshipSchema(
                                name: "posts", destinationEntityName: "Post", inverseName: "categories", isToMany: true)
                        ),
                    ], uniquenessConstraints: [["name"]]),
            ])
    }

    /// A small, fast, seedable generator (SplitMix64): the same seed gives the same store.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(n, 1))) }
    }

    static let words = [
        "swift", "linux", "event", "graph", "store", "replay", "snapshot", "context", "fault", "durable", "commit",
        "the", "a", "of", "and", "to", "in", "is", "for", "with", "log", "frame", "object", "relationship", "inverse",
        "author", "post", "tag", "category", "compaction", "checkpoint", "query", "index", "model", "migration",
    ]

    var random: Random
    let postCount: Int
    /// Title updates still to write after every post exists (a long update history, for compaction).
    var remainingUpdates: Int
    var nextKey: UInt64 = 1
    var transactionID: UInt64 = 0
    var time: Int64 = 1_767_225_600_000_000  // 2026-01-01T00:00:00Z
    var authors: [ObjectReference] = []
    var tags: [ObjectReference] = []
    var categories: [ObjectReference] = []
    var posts: [ObjectReference] = []
    var postsWritten = 0
    var postTargets: [UInt64: (author: ObjectReference, tags: [ObjectReference], categories: [ObjectReference])] = [:]

    init(posts: Int, updates: Int = 0, seed: UInt64) {
        self.random = Random(state: seed)
        self.postCount = posts
        self.remainingUpdates = updates
    }

    mutating func sentence(_ count: Int) -> String {
        (0..<count).map { _ in Self.words[random.below(Self.words.count)] }.joined(separator: " ")
    }

    mutating func newReference(_ entity: UInt32) -> ObjectReference {
        defer { nextKey += 1 }
        return ObjectReference(entityIndex: entity, key: nextKey)
    }

    /// The next changeset, or nil when every post has been written.
    mutating func next() -> Changeset? {
        guard postsWritten < postCount || transactionID == 0 || (remainingUpdates > 0 && !posts.isEmpty) else {
            return nil
        }
        transactionID += 1
        if postsWritten == postCount, transactionID > 1 {
            // Update-only saves of 1–200 titles.
            var operations: [ChangeOperation] = []
            for _ in 0..<min(remainingUpdates, 1 + random.below(200)) {
                let post = posts[random.below(posts.count)]
                operations.append(
                    .update(
                        post,
                        [
                            PropertyChange(
                                propertyIndex: PostProperty.title.rawValue,
                                value: .attribute(.string(sentence(6).capitalizedFirst)))
                        ]))
                remainingUpdates -= 1
            }
            time += Int64(1 + random.below(120)) * 1_000_000
            return changeset(operations)
        }
        time += Int64(1 + random.below(120)) * 1_000_000
        var operations: [ChangeOperation] = []
        if transactionID == 1 {
            let authorCount = max(3, min(200, postCount / 50))
            for index in 0..<authorCount {
                let reference = newReference(Self.author)
                authors.append(reference)
                operations.append(
                    .insert(
                        reference,
                        [
                            PropertyChange(
                                propertyIndex: AuthorProperty.identity.rawValue,
                                value: .attribute(.int64(Int64(index + 1)))),
                            PropertyChange(
                                propertyIndex: AuthorProperty.name.rawValue,
                                value: .attribute(.string("Author \(index + 1)"))),
                            PropertyChange(
                                propertyIndex: AuthorProperty.email.rawValue,
                                value: .attribute(.string("author\(index + 1)@blog.example.com"))),
                            PropertyChange(
                                propertyIndex: AuthorProperty.about.rawValue, value: .attribute(.string(sentence(12)))),
                        ]))
            }
            for (entity, names, list) in [
                (
                    Self.tag,
                    ["swift", "linux", "databases", "performance", "testing", "design", "concurrency", "tools"], 0
                ),
                (Self.category, ["engineering", "news", "tutorials", "opinion"], 1),
            ] {
                for name in names {
                    let reference = newReference(entity)
                    if list == 0 { tags.append(reference) } else { categories.append(reference) }
                    operations.append(
                        .insert(
                            reference,
                            [
                                PropertyChange(
                                    propertyIndex: NamedProperty.name.rawValue, value: .attribute(.string(name)))
                            ]))
                }
            }
            return changeset(operations)
        }
        // Saves of varied size: mostly small, sometimes large.
        let largest = max(20, min(1000, postCount / 20))
        let size = random.below(20) == 0 ? largest / 2 + random.below(largest / 2 + 1) : 1 + random.below(20)
        for _ in 0..<min(size, postCount - postsWritten) { insertPost(into: &operations) }
        // Some history: updates of earlier posts and the occasional delete.
        if !posts.isEmpty {
            for _ in 0..<random.below(4) {
                let post = posts[random.below(posts.count)]
                operations.append(
                    .update(
                        post,
                        [
                            PropertyChange(
                                propertyIndex: PostProperty.title.rawValue,
                                value: .attribute(.string(sentence(6).capitalizedFirst)))
                        ]))
            }
            if random.below(5) == 0, posts.count > 10 { deletePost(at: random.below(posts.count), into: &operations) }
        }
        return changeset(operations)
    }

    private mutating func insertPost(into operations: inout [ChangeOperation]) {
        postsWritten += 1
        let post = newReference(Self.post)
        posts.append(post)
        let identity = Int64(postsWritten)
        let author = authors[random.below(authors.count)]
        var postTags: [ObjectReference] = []
        for _ in 0..<(1 + random.below(3)) {
            let tag = tags[random.below(tags.count)]
            if !postTags.contains(tag) { postTags.append(tag) }
        }
        let category = categories[random.below(categories.count)]
        postTargets[post.key] = (author, postTags, [category])
        let body = sentence(45)
        operations.append(
            .insert(
                post,
                [
                    PropertyChange(propertyIndex: PostProperty.identity.rawValue, value: .attribute(.int64(identity))),
                    PropertyChange(
                        propertyIndex: PostProperty.title.rawValue,
                        value: .attribute(.string(sentence(6).capitalizedFirst))),
                    PropertyChange(propertyIndex: PostProperty.body.rawValue, value: .attribute(.string(body))),
                    PropertyChange(
                        propertyIndex: PostProperty.excerpt.rawValue,
                        value: .attribute(.string(String(body.prefix(80))))),
                    PropertyChange(
                        propertyIndex: PostProperty.date.rawValue,
                        value: .attribute(.date(Double(time) / 1e6 - 978_307_200))),
                    PropertyChange(
                        propertyIndex: PostProperty.url.rawValue,
                        value: .attribute(.url("https://blog.example.com/\(identity)/\(sentence(3).replacingSpaces)"))),
                    PropertyChange(propertyIndex: PostProperty.authoredBy.rawValue, value: .toOne(author)),
                    PropertyChange(propertyIndex: PostProperty.tags.rawValue, value: .toMany(postTags)),
                    PropertyChange(propertyIndex: PostProperty.categories.rawValue, value: .toMany([category])),
                ]))
        operations.append(.relate(author, propertyIndex: AuthorProperty.posts.rawValue, added: [post], removed: []))
        for tag in postTags {
            operations.append(.relate(tag, propertyIndex: NamedProperty.posts.rawValue, added: [post], removed: []))
        }
        operations.append(.relate(category, propertyIndex: NamedProperty.posts.rawValue, added: [post], removed: []))
    }

    private mutating func deletePost(at index: Int, into operations: inout [ChangeOperation]) {
        let post = posts.remove(at: index)
        guard let targets = postTargets.removeValue(forKey: post.key) else { return }
        operations.append(
            .relate(targets.author, propertyIndex: AuthorProperty.posts.rawValue, added: [], removed: [post]))
        for tag in targets.tags {
            operations.append(.relate(tag, propertyIndex: NamedProperty.posts.rawValue, added: [], removed: [post]))
        }
        for category in targets.categories {
            operations.append(
                .relate(category, propertyIndex: NamedProperty.posts.rawValue, added: [], removed: [post]))
        }
        // Updates earlier in this changeset may touch the post; a delete after them is still consistent.
        operations.append(.delete(post))
    }

    private func changeset(_ operations: [ChangeOperation]) -> Changeset {
        Changeset(
            transactionID: transactionID, commitTimeMicroseconds: time, author: "egctl demo", nextKey: nextKey,
            operations: operations)
    }
}

extension String {
    fileprivate var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
    fileprivate var replacingSpaces: String { String(map { $0 == " " ? "-" : $0 }) }
}
