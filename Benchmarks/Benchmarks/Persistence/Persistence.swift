// Micro-benchmarks of both engines on the comparison's workload, with allocation counts (package-benchmark's
// malloc interposer): `swift package --package-path Benchmarks benchmark`. Sizes are small so that each
// benchmark iterates many times; `Benchmarks/compare` runs the full-size scenarios side by side.
import Benchmark
import EventGraphExamples
import Foundation
import Workload

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
        maxDuration: .seconds(3),
        maxIterations: 1_000
    )
    let directory = NSTemporaryDirectory() + "eventgraph-benchmark-\(getpid())"
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let engines: [any StoreEngine.Type] = [EventGraphEngine.self, GRDBEngine.self]
    var counter = 0
    func freshPath(_ engine: any StoreEngine.Type) -> String {
        counter += 1
        return "\(directory)/\(engine.name)-\(counter)"
    }

    let insertCount = 1_000
    let generator = PostGenerator(postCount: insertCount)
    let posts = generator.posts(0..<insertCount)

    for engine in engines {
        // 1: bulk insert, durable. Each iteration needs a new store, so its creation (and removal) is measured too.
        Benchmark("\(engine.name): create a store, insert \(insertCount) posts in one save") { benchmark in
            for _ in benchmark.scaledIterations {
                let path = freshPath(engine)
                defer { engine.removeStore(at: path) }
                blackHole(try engine.bulkInsert(path: path, posts: posts, world: generator.world))
            }
        }

        // 2: one post per save, relaxed (the durable variant is fdatasync-bound: see `compare`).
        Benchmark("\(engine.name): create a store, 100 single-post saves, relaxed") { benchmark in
            let path = freshPath(engine)
            defer { engine.removeStore(at: path) }
            let batch = Array(posts.prefix(100))
            for _ in benchmark.scaledIterations {
                engine.removeStore(at: path)
                blackHole(
                    try engine.singleSaves(path: path, posts: batch, world: generator.world, durability: .relaxed))
            }
        }

        // 4–6: reads on a store of 10,000 posts opened before the measurement.
        let readCount = 10_000
        let readGenerator = PostGenerator(postCount: readCount)
        var random = SplitMix64(seed: 1)
        let identities = (0..<1_000).map { _ in Int64(1 + random.next() % UInt64(readCount)) }
        let readPath = freshPath(engine)

        // The store is built and opened in the benchmark's setup hook, once, and closed in its teardown.
        let box = ReaderBox()
        func readBenchmark(_ name: String, _ body: @escaping (any StoreEngine) throws -> ReadResult) {
            Benchmark(
                "\(engine.name): \(name)",
                closure: { benchmark in
                    let reader = box.reader!
                    for _ in benchmark.scaledIterations {
                        blackHole(try body(reader))
                    }
                },
                setup: {
                    try engine.build(path: readPath, generator: readGenerator, count: readCount, batchSize: 10_000)
                    box.reader = try engine.init(readingStoreAt: readPath)
                },
                teardown: {
                    try box.reader?.close()
                    box.reader = nil
                    engine.removeStore(at: readPath)
                }
            )
        }
        readBenchmark("fetch all \(readCount) posts, read every attribute") { try $0.fetchAll() }
        readBenchmark("fetch 1,000 random posts by ID") { try $0.fetchByID(identities) }
        let dates = (0..<10).map { PostGenerator.date(ofPostAt: $0 * 500) }
        readBenchmark("10 queries date == value (indexed)") { try $0.fetchEqual(dates: dates) }
        let ranges = (0..<10).map {
            PostGenerator.date(ofPostAt: $0 * 900)...PostGenerator.date(ofPostAt: $0 * 900 + 99)
        }
        readBenchmark("10 queries date in range (indexed, 100 posts each)") { try $0.fetchRange(ranges) }
        let words = Array(PostGenerator.substringQueryWords.prefix(2))
        readBenchmark("2 queries title contains word (not indexed)") { try $0.fetchContaining(words) }
    }
}

/// Holds a benchmark's open store between its setup and teardown hooks (package-benchmark runs hooks and
/// iterations on one thread, one benchmark at a time).
final class ReaderBox: @unchecked Sendable {
    var reader: (any StoreEngine)?
}
