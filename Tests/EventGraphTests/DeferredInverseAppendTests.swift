import EventGraphExamples
import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// Appends to new objects' to-many inverses held back until the target's unsaved values are read or written (a bulk
/// insert relates each new post to one of many authors and tags): every observable point sees them, in order.
@Suite("Inverse appends held back")
struct DeferredInverseAppendTests {
    private struct World {
        let context: ObjectContext
        let author: Author
        let tags: [EventGraphExamples.Tag]
        let posts: [Post]
    }

    /// An author and two tags, then `count` posts related to them: the tags' and the author's lists are appended to.
    private func world(_ container: ModelContainer, count: Int = 20) -> World {
        let context = container.newBackgroundContext()
        let author = Author()
        context.insert(author)
        author.name = "A"
        let tags = ["x", "y"].map { name in
            let tag = EventGraphExamples.Tag()
            context.insert(tag)
            tag.name = name
            return tag
        }
        let posts = (0..<count).map { index in
            let post = Post()
            context.insert(post)
            post.identity = Int64(index + 1)
            post.title = "P\(index)"
            post.authoredBy = author
            post.tags = index % 2 == 0 ? [tags[0], tags[1]] : [tags[1]]
            return post
        }
        return World(context: context, author: author, tags: tags, posts: posts)
    }

    private func postsIndex(of object: ManagedObject) -> Int {
        object.entity.properties.firstIndex { $0.name == "posts" }!
    }

    /// The references in an object's list, read without going through the relationship's public accessor.
    private func list(of object: ManagedObject) -> [ObjectReference] {
        object.currentValue(at: postsIndex(of: object))?.references ?? []
    }

    @Test func appendsAreHeldBackAndReadInTheOrderTheyWereMade() throws {
        let directory = TemporaryDirectory()
        let container = try BlogLibrary.open(path: directory.file())
        let world = world(container)
        let context = world.context
        // One append per post to the author, one or two to the tags: none applied yet.
        #expect(context.deferredInverseAppends.count == 20 + 30)
        #expect(world.author.hasDeferredInverseAppends)
        #expect(list(of: world.author) == world.posts.map { context.reference(to: $0) })
        #expect(context.deferredInverseAppends.isEmpty)
        #expect(!world.author.hasDeferredInverseAppends)
        #expect(!world.tags[0].hasDeferredInverseAppends)
        #expect(
            list(of: world.tags[0])
                == world.posts.enumerated().filter { $0.offset % 2 == 0 }.map { context.reference(to: $0.element) })
        #expect(list(of: world.tags[1]) == world.posts.map { context.reference(to: $0) })
        #expect(world.author.posts.count == 20 && world.tags[1].posts.count == 20)
        try container.close()
    }

    /// Many targets, each with appends interleaved with the others' (a bulk insert's spread): every target's list
    /// holds its own posts, in order, however the table of (target, relationship) pairs grew while they were counted.
    @Test func appendsToManyTargetsReachEachTargetInOrder() throws {
        let directory = TemporaryDirectory()
        let container = try BlogLibrary.open(path: directory.file())
        let context = container.newBackgroundContext()
        let authors = (0..<97).map { index in
            let author = Author()
            context.insert(author)
            author.name = "A\(index)"
            return author
        }
        let tags = (0..<61).map { index in
            let tag = EventGraphExamples.Tag()
            context.insert(tag)
            tag.name = "t\(index)"
            return tag
        }
        let posts = (0..<3_000).map { index in
            let post = Post()
            context.insert(post)
            post.identity = Int64(index + 1)
            post.authoredBy = authors[(index * 7) % authors.count]
            post.tags = [tags[index % tags.count], tags[(index * 5 + 3) % tags.count]]
            return post
        }
        #expect(context.deferredInverseAppends.count == 3 * posts.count - duplicateTagCount(posts.count, tags.count))
        // Reading one target applies them all.
        _ = list(of: authors[0])
        #expect(context.deferredInverseAppends.isEmpty)
        for (number, author) in authors.enumerated() {
            let expected = posts.indices.filter { ($0 * 7) % authors.count == number }
                .map { context.reference(to: posts[$0]) }
            #expect(list(of: author) == expected, "author \(number)")
        }
        for (number, tag) in tags.enumerated() {
            let expected = posts.indices.filter { $0 % tags.count == number || ($0 * 5 + 3) % tags.count == number }
                .map { context.reference(to: posts[$0]) }
            #expect(list(of: tag) == expected, "tag \(number)")
        }
        try container.close()
    }

    /// The posts of `count` whose two tags (see above) are one tag, which the set holds once.
    private func duplicateTagCount(_ count: Int, _ tagCount: Int) -> Int {
        (0..<count).filter { $0 % tagCount == ($0 * 5 + 3) % tagCount }.count
    }

    @Test func aReadOfAnyValueOfATargetAppliesThem() throws {
        let directory = TemporaryDirectory()
        let container = try BlogLibrary.open(path: directory.file())
        let world = world(container)
        #expect(!world.context.deferredInverseAppends.isEmpty)
        #expect(world.tags[0].name == "x")
        #expect(world.context.deferredInverseAppends.isEmpty)
        #expect(world.tags[0].posts.count == 10)
        #expect(world.context.hasChanges)
        try container.close()
    }

    @Test func editsAfterTheAppendsSeeThem() throws {
        let directory = TemporaryDirectory()
        let container = try BlogLibrary.open(path: directory.file())
        let world = world(container)
        let context = world.context
        // A deleted post leaves its author's and tags' lists (the delete rule reads them).
        context.delete(world.posts[3])
        #expect(context.deferredInverseAppends.isEmpty)
        #expect(world.author.posts.count == 19 && !world.author.posts.contains(world.posts[3]))
        // More appends, then the author's list set whole: the posts left out lose their author.
        let more = Post()
        context.insert(more)
        more.identity = 100
        more.authoredBy = world.author
        #expect(context.deferredInverseAppends.count == 1)
        world.author.posts = [world.posts[0], more]
        #expect(context.deferredInverseAppends.isEmpty)
        #expect(world.posts[1].authoredBy == nil && more.authoredBy === world.author)
        #expect(Set(world.author.posts) == [world.posts[0], more])
        // A post moved to another author leaves the first one's list.
        let other = Author()
        context.insert(other)
        other.name = "B"
        world.posts[0].authoredBy = other
        more.authoredBy = other
        #expect(world.author.posts.isEmpty)
        #expect(list(of: other) == [world.posts[0], more].map { context.reference(to: $0) })
        try container.close()
    }

    @Test func theyAreHeldInBlocksBelowGlibcsMmapThresholdAndAppliedInOrder() throws {
        // 2,500 posts: 2,500 appends to the author, 3,750 to the tags, in blocks of at most 64 KiB (a block of
        // 128 KiB or more would be mmapped, and its free would raise glibc's mmap threshold, h89).
        #expect(DeferredInverseAppends.blockCapacity * MemoryLayout<DeferredInverseAppend>.stride <= 65_536)
        #expect(MemoryLayout<DeferredInverseAppend>.stride == 32)
        let directory = TemporaryDirectory()
        let container = try BlogLibrary.open(path: directory.file())
        let world = world(container, count: 2_500)
        let context = world.context
        let blocks = context.deferredInverseAppends.blocks
        #expect(context.deferredInverseAppends.count == 2_500 + 3_750)
        #expect(
            blocks.count == (6_250 + DeferredInverseAppends.blockCapacity - 1) / DeferredInverseAppends.blockCapacity)
        #expect(blocks.allSatisfy { $0.count <= DeferredInverseAppends.blockCapacity && $0.capacity * 32 < 131_072 })
        let references = world.posts.map { context.reference(to: $0) }
        #expect(list(of: world.author) == references)
        #expect(list(of: world.tags[0]) == references.enumerated().filter { $0.offset % 2 == 0 }.map(\.element))
        #expect(list(of: world.tags[1]) == references)
        // Appends to a list that holds references already follow them.
        let more = (0..<3).map { index in
            let post = Post()
            context.insert(post)
            post.identity = Int64(10_000 + index)
            post.title = "M\(index)"
            post.authoredBy = world.author
            return post
        }
        #expect(context.deferredInverseAppends.count == 3)
        #expect(list(of: world.author) == references + more.map { context.reference(to: $0) })
        try context.save()
        #expect(world.author.posts.count == 2_503 && world.tags[1].posts.count == 2_500)
        try container.close()
    }

    @Test func aSaveWritesThemAndReopeningReadsThem() throws {
        let directory = TemporaryDirectory()
        do {
            let container = try BlogLibrary.open(path: directory.file())
            let world = world(container, count: 300)
            #expect(world.context.deferredInverseAppends.count == 300 + 450)
            try world.context.save()
            #expect(world.context.deferredInverseAppends.isEmpty)
            #expect(world.author.posts.count == 300 && world.tags[0].posts.count == 150)
            try container.close()
        }
        let container = try BlogLibrary.open(path: directory.file())
        let context = container.newBackgroundContext()
        let authors = try context.fetch(FetchDescriptor<Author>())
        #expect(authors.count == 1 && authors.first?.posts.count == 300)
        let tags = try context.fetch(FetchDescriptor<EventGraphExamples.Tag>())
        #expect(Set(tags.map { $0.posts.count }) == [150, 300])
        try container.close()
    }

    @Test func rollbackResetAndReleaseApplyThemFirst() throws {
        let directory = TemporaryDirectory()
        let container = try BlogLibrary.open(path: directory.file())
        let rolledBack = world(container)
        rolledBack.context.rollback()
        #expect(rolledBack.context.deferredInverseAppends.isEmpty && !rolledBack.context.hasChanges)
        #expect(!rolledBack.author.hasDeferredInverseAppends)
        let reset = world(container)
        reset.context.reset()
        #expect(reset.context.deferredInverseAppends.isEmpty)
        // A context released with appends held back: its objects, still held, are no longer its own.
        var author: Author?
        do {
            let released = world(container)
            author = released.author
            #expect(!released.context.deferredInverseAppends.isEmpty)
        }
        #expect(author?.hasDeferredInverseAppends == false)
        try container.close()
    }

    @Test func targetsThatAreNotNewAreEditedAtOnce() throws {
        let directory = TemporaryDirectory()
        let container = try BlogLibrary.open(path: directory.file())
        do {
            let world = world(container, count: 2)
            try world.context.save()
        }
        let context = container.newBackgroundContext()
        let author = try #require(try context.fetch(FetchDescriptor<Author>()).first)
        let post = Post()
        context.insert(post)
        post.identity = 50
        post.authoredBy = author
        #expect(context.deferredInverseAppends.isEmpty)
        #expect(author.posts.count == 3)
        try context.save()
        try container.close()
    }
}
