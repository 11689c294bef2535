import EventGraph
import EventGraphExamples
import Foundation
import Testing

/// Rough timings for the performance goals; run with `EG_PERF=1 swift test -c release --filter Performance`.
/// The Benchmarks package will make these permanent.
@Suite("Performance smoke", .enabled(if: ProcessInfo.processInfo.environment["EG_PERF"] != nil))
struct PerformanceSmokeTests {
    @Test func bulkInsertFetchAllAndFetchByID() throws {
        let directory = TemporaryDirectory()
        let count = 100_000
        let container = try ModelContainer(path: directory.file(), model: BlogLibrary.model)
        let clock = ContinuousClock()
        var ids: [ObjectID] = []
        // The test's own input, built before the clock starts (String(repeating:) alone took ~1 s for 100k).
        let body = String(repeating: "x", count: 400)
        let insert = try clock.measure {
            let context = container.newBackgroundContext()
            var posts: [Post] = []
            posts.reserveCapacity(count)
            for index in 0..<count {
                let post = Post()
                context.insert(post)
                post.identity = Int64(index)
                post.title = "Post number \(index)"
                post.body = body
                post.date = Date(timeIntervalSinceReferenceDate: 725_846_400)  // 2024-01-01
                post.excerpt = "An excerpt of post \(index)"
                post.url = "https://example.com/posts/\(index)"
                posts.append(post)
            }
            let saveTime = try clock.measure { try context.save() }
            print("perf: save alone \(saveTime)")
            ids = posts.map(\.objectID)
        }
        var total = 0
        let context = container.newBackgroundContext()
        let fetchAll = try clock.measure {
            let posts = try context.fetch(FetchDescriptor<Post>())
            for post in posts {
                total &+=
                    Int(post.identity) &+ post.title.utf8.count &+ post.body.utf8.count
                    &+ Int(post.date.timeIntervalSinceReferenceDate)
                total &+= post.excerpt.utf8.count &+ post.url.utf8.count &+ post.fullCoverageImageURL.utf8.count
                total &+= post.thumbnailCoverageImageURL.utf8.count
            }
        }
        let sample = (0..<count).map { _ in ids.randomElement()! }
        let fresh = container.newBackgroundContext()
        let byID = clock.measure {
            for id in sample { total &+= Int((fresh.object(with: id) as! Post).identity) }
        }
        try container.close()
        let reopen = try clock.measure {
            let reopened = try ModelContainer(path: directory.file(), model: BlogLibrary.model)
            try reopened.close()
        }
        print(
            "perf: insert \(count) in one save \(insert), fetch all + read \(fetchAll), \(count) random by ID \(byID), reopen \(reopen), file \(directory.byteCount()) bytes (\(total))"
        )
    }
}
