import EventGraph
import EventGraphExamples
import Foundation
import Testing

/// Whatever a merge decides — find-or-create turning an insert into an update, `objectWins`, `storeWins` — both
/// sides of every relationship agree afterwards: in the store, in the saving context and in the log.
@Suite("Merged saves keep inverses symmetric")
struct InverseMergeTests {
    /// Seeds author 1 and author 2, and returns a context for each of two racing importers.
    private func twoImporters(_ container: ModelContainer) throws -> (ObjectContext, ObjectContext) {
        let setup = container.newBackgroundContext(name: "setup")
        for identity in [1, 2] as [Int64] {
            _ = try setup.fetchOrInsert(Author.self, unique: \.identity, equals: identity) { $0.name = "A\(identity)" }
        }
        try setup.save()
        return (container.newBackgroundContext(name: "first"), container.newBackgroundContext(name: "second"))
    }

    @Test func findOrCreateFromTwoVersionsOfARecordLeavesOneAuthorListingThePost() throws {
        let directory = TemporaryDirectory()
        let container = try BlogLibrary.open(path: directory.file())
        let (first, second) = try twoImporters(container)
        // Two versions of record 42 are imported at once: one by author 1, one by author 2.
        let early = try first.fetchOrInsert(Post.self, unique: \.identity, equals: 42) { $0.title = "early" }
        early.authoredBy = try first.fetchOrInsert(Author.self, unique: \.identity, equals: 1)
        let late = try second.fetchOrInsert(Post.self, unique: \.identity, equals: 42) { $0.title = "late" }
        let secondsAuthor1 = try second.fetchOrInsert(Author.self, unique: \.identity, equals: 1)
        #expect(secondsAuthor1.posts.isEmpty, "the second context read author 1 before the first save")
        late.authoredBy = try second.fetchOrInsert(Author.self, unique: \.identity, equals: 2)
        try first.save()
        try second.save()

        #expect(late.authoredBy?.identity == 2, "the last save's values win")
        #expect(secondsAuthor1.posts.isEmpty, "the saving context's own objects agree without a refresh")
        let check = container.newBackgroundContext()
        let authors = try check.fetch(FetchDescriptor<Author>(sortBy: [SortDescriptor(\.identity)]))
        #expect(authors.map { $0.posts.map(\.identity) } == [[], [42]])
        #expect(try GraphIntegrity.issues(container) == [])
        try container.close()

        let reopened = try BlogLibrary.open(path: directory.file())
        let again = reopened.newBackgroundContext()
        let reread = try again.fetch(FetchDescriptor<Author>(sortBy: [SortDescriptor(\.identity)]))
        #expect(reread.map { $0.posts.map(\.identity) } == [[], [42]], "the log holds the repaired inverse")
        try reopened.close()
    }

    @Test func findOrCreateThatAddsToAManyToManyKeepsBothSides() throws {
        let container = try ModelContainer(inMemoryWith: BlogLibrary.model)
        let (first, second) = try twoImporters(container)
        let early = try first.fetchOrInsert(Post.self, unique: \.identity, equals: 7)
        early.tags = [try first.fetchOrInsert(EventGraphExamples.Tag.self, unique: \.name, equals: "swift")]
        let late = try second.fetchOrInsert(Post.self, unique: \.identity, equals: 7)
        late.tags = [try second.fetchOrInsert(EventGraphExamples.Tag.self, unique: \.name, equals: "linux")]
        try first.save()
        try second.save()
        let check = container.newBackgroundContext()
        let post = try #require(try check.fetch(FetchDescriptor<Post>()).first)
        let tags = try check.fetch(FetchDescriptor<EventGraphExamples.Tag>())
        #expect(Set(post.tags.map(\.name)) == ["swift", "linux"], "to-many values of an upsert are added")
        for tag in tags { #expect(tag.posts.map(\.identity) == [7], "\(tag.name) lists the post") }
        #expect(try GraphIntegrity.issues(container) == [])
    }

    @Test(arguments: [MergePolicy.objectWins, .storeWins])
    func aConflictingToOneChangeLeavesTheInversesAgreeing(policy: MergePolicy) throws {
        let container = try ModelContainer(inMemoryWith: BlogLibrary.model)
        let setup = container.newBackgroundContext()
        for identity in [0, 1, 2] as [Int64] {
            _ = try setup.fetchOrInsert(Author.self, unique: \.identity, equals: identity)
        }
        let post = try setup.fetchOrInsert(Post.self, unique: \.identity, equals: 5)
        post.authoredBy = try setup.fetchOrInsert(Author.self, unique: \.identity, equals: 0)
        try setup.save()
        let (first, second) = (container.newBackgroundContext(), container.newBackgroundContext())
        second.mergePolicy = policy
        let theirs = try #require(first.object(with: post.objectID) as? Post)
        let mine = try #require(second.object(with: post.objectID) as? Post)
        theirs.authoredBy = try first.fetchOrInsert(Author.self, unique: \.identity, equals: 1)
        mine.authoredBy = try second.fetchOrInsert(Author.self, unique: \.identity, equals: 2)
        try first.save()
        try second.save()

        let check = container.newBackgroundContext()
        let saved = try #require(try check.fetch(FetchDescriptor<Post>()).first)
        #expect(saved.authoredBy?.identity == (policy == .objectWins ? 2 : 1))
        let authors = try check.fetch(FetchDescriptor<Author>(sortBy: [SortDescriptor(\.identity)]))
        let expected: [[Int64]] = policy == .objectWins ? [[], [], [5]] : [[], [5], []]
        #expect(authors.map { $0.posts.map(\.identity) } == expected)
        #expect(try GraphIntegrity.issues(container) == [])
    }

    @Test func deletingAnObjectWhoseInverseMovedMeanwhileLeavesNoDanglingReference() throws {
        let container = try ModelContainer(inMemoryWith: BlogLibrary.model)
        let setup = container.newBackgroundContext()
        let post = try setup.fetchOrInsert(Post.self, unique: \.identity, equals: 9)
        post.authoredBy = try setup.fetchOrInsert(Author.self, unique: \.identity, equals: 1)
        _ = try setup.fetchOrInsert(Author.self, unique: \.identity, equals: 2)
        try setup.save()
        let (mover, deleter) = (container.newBackgroundContext(), container.newBackgroundContext())
        deleter.mergePolicy = .objectWins
        let moved = try #require(mover.object(with: post.objectID) as? Post)
        moved.authoredBy = try mover.fetchOrInsert(Author.self, unique: \.identity, equals: 2)
        let doomed = try #require(deleter.object(with: post.objectID) as? Post)
        _ = doomed.authoredBy
        try mover.save()
        deleter.delete(doomed)
        try deleter.save()

        let check = container.newBackgroundContext()
        #expect(try check.fetch(FetchDescriptor<Post>()).isEmpty)
        for author in try check.fetch(FetchDescriptor<Author>()) {
            #expect(author.posts.isEmpty, "author \(author.identity) lists no deleted post")
        }
        #expect(try GraphIntegrity.issues(container) == [])
    }

    @Test func aOneToOneTargetClaimedByTwoFindOrCreatesEndsWithOneOwner() throws {
        let container = try ModelContainer(inMemoryWith: InverseRaceTests.model)
        let setup = container.newBackgroundContext()
        for identity in [1, 2] as [Int64] {
            _ = try setup.fetchOrInsert(RaceAuthor.self, unique: \.identity, equals: identity)
        }
        try setup.save()
        let (first, second) = (container.newBackgroundContext(), container.newBackgroundContext())
        let author1 = try first.fetchOrInsert(RaceAuthor.self, unique: \.identity, equals: 1)
        author1.profile = try first.fetchOrInsert(RaceProfile.self, unique: \.identity, equals: 0)
        let author2 = try second.fetchOrInsert(RaceAuthor.self, unique: \.identity, equals: 2)
        author2.profile = try second.fetchOrInsert(RaceProfile.self, unique: \.identity, equals: 0)
        try first.save()
        try second.save()

        let check = container.newBackgroundContext()
        let profile = try #require(try check.fetch(FetchDescriptor<RaceProfile>()).first)
        #expect(profile.owner?.identity == 2, "the last save's claim wins")
        let authors = try check.fetch(FetchDescriptor<RaceAuthor>(sortBy: [SortDescriptor(\.identity)]))
        #expect(authors.map { $0.profile?.identity } == [nil, 0], "the first owner lets go")
        #expect(try GraphIntegrity.issues(container) == [])
    }
}
