/// One row of the comparison: a scenario key (stable across commits), its unit and which direction is better.
struct Scenario: Sendable {
    let key: String
    let title: String
    let unit: String
    let isHigherBetter: Bool
    /// The goal as a ratio (EventGraph / GRDB, > 1 better), when the goal is a ratio.
    let goalRatio: Double?

    /// The scenarios in the order.
    static let all: [Scenario] = [
        Scenario(
            key: "bulk-insert", title: "bulk insert, one save", unit: "posts/s", isHigherBetter: true, goalRatio: 5),
        Scenario(
            key: "single-save-durable", title: "one post per save, durable", unit: "saves/s", isHigherBetter: true,
            goalRatio: 1),
        Scenario(
            key: "single-save-relaxed", title: "one post per save, relaxed", unit: "saves/s", isHigherBetter: true,
            goalRatio: nil),
        Scenario(
            key: "concurrent-writers", title: "8 writers, one post per save", unit: "saves/s", isHigherBetter: true,
            goalRatio: 5),
        Scenario(
            key: "fetch-all", title: "fetch all, read every attribute", unit: "posts/s", isHigherBetter: true,
            goalRatio: 10),
        Scenario(
            key: "fetch-all-compacted", title: "fetch all after compaction, read every attribute", unit: "posts/s",
            isHigherBetter: true, goalRatio: 10),
        Scenario(
            key: "fetch-by-id", title: "random fetch by ID", unit: "fetches/s", isHigherBetter: true, goalRatio: 10),
        Scenario(
            key: "predicate-indexed-eq", title: "date == value (indexed)", unit: "queries/s", isHigherBetter: true,
            goalRatio: 2),
        Scenario(
            key: "predicate-indexed-range", title: "date in range (indexed)", unit: "queries/s", isHigherBetter: true,
            goalRatio: 2),
        Scenario(
            key: "predicate-substring", title: "title contains word (not indexed)", unit: "queries/s",
            isHigherBetter: true, goalRatio: 2),
        Scenario(key: "open-1m", title: "open + first fetch (warm)", unit: "s", isHigherBetter: false, goalRatio: nil),
        Scenario(key: "compact-1m", title: "compact after updates", unit: "MB/s", isHigherBetter: true, goalRatio: nil),
        Scenario(key: "size-1m", title: "bytes on disk", unit: "MB", isHigherBetter: false, goalRatio: 1 / 0.6),
        Scenario(key: "memory-1m", title: "peak RSS, store open", unit: "MB", isHigherBetter: false, goalRatio: nil),
        Scenario(
            key: "memory-open", title: "peak RSS, open alone", unit: "MB", isHigherBetter: false, goalRatio: nil),
        Scenario(
            key: "memory-fetch-all", title: "peak RSS, open + fetch all", unit: "MB", isHigherBetter: false,
            goalRatio: nil),
        Scenario(
            key: "open-1m-tail", title: "open + first fetch, 10k-transaction tail", unit: "s", isHigherBetter: false,
            goalRatio: nil),
        Scenario(
            key: "open-10m-tail", title: "open + first fetch, tail of 1 save per 10 posts", unit: "s",
            isHigherBetter: false, goalRatio: nil),
    ]
}

/// A measured row: the medians of both engines.
struct ScenarioResult: Sendable {
    let scenario: Scenario
    let eventGraph: Double
    let grdb: Double

    /// > 1 when EventGraph is better.
    var ratio: Double {
        guard eventGraph > 0, grdb > 0 else { return 0 }
        return scenario.isHigherBetter ? eventGraph / grdb : grdb / eventGraph
    }
}

/// The workload sizes of a run.
struct Sizes: Sendable {
    var posts: Int
    var singleSaves: Int
    var writers: Int
    var savesPerWriter: Int
    var fetchesByID: Int
    var equalityQueries: Int
    var rangeQueries: Int
    /// Posts matched by each range query.
    var rangePostCount: Int
    var substringQueries: Int
    var largePosts: Int
    var runs: Int
    var batchSize: Int

    static let full = Sizes(
        posts: 100_000, singleSaves: 10_000, writers: 8, savesPerWriter: 1_000, fetchesByID: 100_000,
        equalityQueries: 200, rangeQueries: 50, rangePostCount: 1_000, substringQueries: 20, largePosts: 1_000_000,
        runs: 3, batchSize: 10_000)
    static let quick = Sizes(
        posts: 10_000, singleSaves: 500, writers: 8, savesPerWriter: 100, fetchesByID: 10_000, equalityQueries: 50,
        rangeQueries: 20, rangePostCount: 100, substringQueries: 10, largePosts: 100_000, runs: 3, batchSize: 10_000)
}
