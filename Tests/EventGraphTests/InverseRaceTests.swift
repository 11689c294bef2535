import EventGraph
import Foundation
import LogFormat
import Synchronization
import TestSupport
import Testing

// A model with every kind of inverse: to-one ↔ to-many (post.author), many-to-many (post.tags) and one-to-one
// (author.profile), all found or created by a unique identity.

final class RaceAuthor: ManagedObject {
    @Attribute(.unique) var identity: Int64 = 0
    @Attribute var name: String = ""
    @Relationship(inverse: "author") var posts: Set<RacePost>
    @Relationship(inverse: "owner") var profile: RaceProfile?
}

final class RacePost: ManagedObject {
    @Attribute(.unique) var identity: Int64 = 0
    @Attribute var title: String = ""
    @Relationship(inverse: "posts") var author: RaceAuthor?
    @Relationship(inverse: "posts") var tags: Set<RaceTag>
}

final class RaceTag: ManagedObject {
    @Attribute(.unique) var identity: Int64 = 0
    @Relationship(inverse: "tags") var posts: Set<RacePost>
}

final class RaceProfile: ManagedObject {
    @Attribute(.unique) var identity: Int64 = 0
    @Relationship(inverse: "profile") var owner: RaceAuthor?
}

/// Several contexts on several threads find-or-create the same few objects, change their relationships from
/// stale views, delete some, and save at the same moment under every merge policy; after every round the store's
/// live state and its log are checked for inverse symmetry, dangling references and uniqueness, and the log must
/// replay to the live state; after the last round, the store is reopened and checked again.
///
/// Each thread's choices come from the seed (printed; replay with `EG_TEST_SEED`); the interleaving of the saves is
/// up to the scheduler, so a replay repeats the workload, not necessarily the order.
@Suite("Racing find-or-create keeps inverses symmetric")
struct InverseRaceTests {
    static let model = try! ObjectModel(
        name: "Race", version: "1", types: [RaceAuthor.self, RacePost.self, RaceTag.self, RaceProfile.self])
    static let threadCount = 4
    static let roundCount = 25

    @Test func racingContextsLeaveASymmetricGraphInMemoryAndInTheLog() throws {
        let seed =
            ProcessInfo.processInfo.environment["EG_TEST_SEED"].flatMap(UInt64.init)
            ?? UInt64.random(in: 1...UInt64.max)
        print("InverseRaceTests seed: \(seed) (replay with EG_TEST_SEED=\(seed))")
        let directory = TemporaryDirectory()
        let configuration = ModelContainer.Configuration(durability: .none)
        let container = try ModelContainer(path: directory.file(), model: Self.model, configuration: configuration)
        let unexpected = LockedValue<[String]>([])
        var saves = 0
        for round in 0..<Self.roundCount {
            let barrier = ThreadBarrier(count: Self.threadCount)
            let saved = Atomic<Int>(0)
            onThreads(Self.threadCount) { thread in
                var random = SeededGenerator(seed: seed &+ UInt64(round * Self.threadCount + thread) &* 0x9E37_79B9)
                let context = container.newBackgroundContext(name: "round \(round) thread \(thread)")
                context.mergePolicy = [MergePolicy.objectWins, .storeWins, .error].randomElement(using: &random)!
                let deletes = Int.random(in: 0..<4, using: &random) == 0
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    do {
                        try Self.change(context, deletes: deletes, using: &random)
                    } catch {
                        unexpected.withLock { $0.append("find-or-create: \(error)") }
                    }
                }
                barrier.arriveAndWait()
                do throws(EventGraphError) {
                    try context.save()
                    saved.add(1, ordering: .relaxed)
                } catch  where error.code == .conflict || error.code == .uniqueness {
                    context.rollback()
                } catch {
                    unexpected.withLock { $0.append("seed \(seed), round \(round), thread \(thread): \(error)") }
                }
            }
            saves += saved.load(ordering: .relaxed)
            #expect(unexpected.withLock { $0 } == [])
            let issues = try GraphIntegrity.issues(container)
            #expect(issues == [], "seed \(seed), round \(round)")
            if !issues.isEmpty { break }
        }
        #expect(saves > Self.roundCount, "most saves succeed (seed \(seed))")
        let digest = try container.stateDigest()
        try container.close()
        let reopened = try ModelContainer(path: directory.file(), model: Self.model, configuration: configuration)
        #expect(try reopened.stateDigest() == digest, "seed \(seed): the reopened store has the same state")
        #expect(try GraphIntegrity.issues(reopened) == [], "seed \(seed): after reopen")
        try reopened.close()
    }

    /// One random change: find-or-create a post and give it an author or tags, move it through the author's side,
    /// hand a profile to an author (one-to-one), or — in a deleting context — delete an object.
    static func change(_ context: ObjectContext, deletes: Bool, using random: inout SeededGenerator)
        throws(EventGraphError)
    {
        func identity(_ range: Range<Int64>) -> Int64 { Int64.random(in: range, using: &random) }
        if deletes {
            let victims: [ManagedObject] =
                switch Int.random(in: 0..<4, using: &random) {
                case 0: (try? context.fetch(FetchDescriptor<RacePost>())) ?? []
                case 1: (try? context.fetch(FetchDescriptor<RaceAuthor>())) ?? []
                case 2: (try? context.fetch(FetchDescriptor<RaceTag>())) ?? []
                default: (try? context.fetch(FetchDescriptor<RaceProfile>())) ?? []
                }
            if let victim = victims.filter({ !$0.isDeleted }).randomElement(using: &random) { context.delete(victim) }
            return
        }
        let post = try context.fetchOrInsert(RacePost.self, unique: \.identity, equals: identity(0..<6)) {
            $0.title = "new"
        }
        switch Int.random(in: 0..<5, using: &random) {
        case 0:
            post.author =
                try Bool.random(using: &random)
                ? context.fetchOrInsert(RaceAuthor.self, unique: \.identity, equals: identity(0..<4)) : nil
        case 1:
            post.tags.insert(try context.fetchOrInsert(RaceTag.self, unique: \.identity, equals: identity(0..<3)))
        case 2:
            if let tag = post.tags.randomElement(using: &random) { post.tags.remove(tag) }
        case 3:
            let author = try context.fetchOrInsert(RaceAuthor.self, unique: \.identity, equals: identity(0..<4))
            author.posts.insert(post)
        default:
            let author = try context.fetchOrInsert(RaceAuthor.self, unique: \.identity, equals: identity(0..<4))
            author.profile = try context.fetchOrInsert(RaceProfile.self, unique: \.identity, equals: identity(0..<3))
        }
    }
}
