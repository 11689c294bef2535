import EventGraphExamples
import Foundation
import Workload

/// Runs every scenario for both engines, alternating which goes first in each run so that drift of the
/// machine (other load, thermal, page cache) hits both, and keeps the median of each.
final class Comparison {
    let sizes: Sizes
    let directory: String
    /// Only the large store's open scenarios (`--large`: `open-1m`, `memory-*`, `open-1m-tail`, `open-10m-tail`).
    var largeOnly = false
    /// Only the cross-store notes of issue 12 (`--stores`: EventGraph against itself, two stores against one).
    var storesOnly = false
    /// With `--only`: the write scenarios to run (their keys), alone, at the run's size; nil runs them all.
    var onlyWriteScenarios: Set<String>?
    let engines: [any StoreEngine.Type] = [EventGraphEngine.self, GRDBEngine.self]
    var results: [ScenarioResult] = []
    /// Extra measurements reported under the table.
    var notes: [String] = []
    private var counter = 0

    init(sizes: Sizes, directory: String) {
        self.sizes = sizes
        self.directory = directory
    }

    func log(_ message: String) {
        FileHandle.standardError.write(Data("\(message)\n".utf8))
    }

    /// A new store path for an engine.
    func freshPath(_ engine: any StoreEngine.Type, _ label: String) -> String {
        counter += 1
        let suffix = engine == EventGraphEngine.self ? "eglog" : "sqlite"
        return "\(directory)/\(label)-\(counter).\(suffix)"
    }

    /// Runs `measure` `sizes.runs` times per engine, alternating the order; returns the medians (EventGraph, GRDB).
    func alternate(_ label: String, _ measure: (any StoreEngine.Type) throws -> Double) throws -> (Double, Double) {
        var samples: [[Double]] = [[], []]
        for run in 0..<sizes.runs {
            let order = run % 2 == 0 ? [0, 1] : [1, 0]
            for index in order {
                let value = try measure(engines[index])
                samples[index].append(value)
                log("  \(label) \(engines[index].name) run \(run + 1): \(format(value))")
            }
        }
        return (median(samples[0]), median(samples[1]))
    }

    func record(_ key: String, _ values: (Double, Double)) {
        let scenario = Scenario.all.first { $0.key == key }!
        results.append(ScenarioResult(scenario: scenario, eventGraph: values.0, grdb: values.1))
    }

    /// Runs every scenario, or with `readsOnly` the read scenarios alone (to profile or compare the read path), or
    /// with `writesOnly` the write scenarios and `compact-1m` alone (the write path and the checkpoint writer), or with
    /// `largeOnly` the large store's open scenarios alone, or with `storesOnly` the cross-store notes alone.
    func run(readsOnly: Bool = false, writesOnly: Bool = false) throws {
        if largeOnly { return try largeStoreScenarios() }
        if storesOnly { return try crossStoreScenarios() }
        if let only = onlyWriteScenarios {
            if !only.subtracting(["compact-1m"]).isEmpty { try writeScenarios() }
            if only.contains("compact-1m") { try largeStoreScenarios(compactionOnly: true) }
            return
        }
        if writesOnly {
            try writeScenarios()
            try largeStoreScenarios(compactionOnly: true)
            return
        }
        if !readsOnly { try writeScenarios() }
        try readScenarios()
        if !readsOnly {
            try largeStoreScenarios()
            try crossStoreScenarios()  // issue 12: two stores against one, reported as notes
        }
        results.sort { a, b in
            Scenario.all.firstIndex { $0.key == a.scenario.key }! < Scenario.all.firstIndex {
                $0.key == b.scenario.key
            }!
        }
    }

    // MARK: - Scenarios 1–3

    func writeScenarios() throws {
        if selected("bulk-insert") {
            let generator = PostGenerator(postCount: sizes.posts)
            let posts = generator.posts(0..<sizes.posts)
            log("bulk-insert: \(sizes.posts) posts in one save, durable")
            record(
                "bulk-insert",
                try alternate("bulk-insert") { engine in
                    let path = freshPath(engine, "bulk")
                    defer { engine.removeStore(at: path) }
                    return Double(posts.count)
                        / (try engine.bulkInsert(path: path, posts: posts, world: generator.world))
                })
        }

        let singleGenerator = PostGenerator(postCount: sizes.singleSaves)
        let singlePosts = singleGenerator.posts(0..<sizes.singleSaves)
        for durability in [DurabilityMode.durable, .relaxed] {
            let key = "single-save-\(durability.rawValue)"
            guard selected(key) else { continue }
            log("\(key): \(sizes.singleSaves) saves of one post")
            record(
                key,
                try alternate(key) { engine in
                    let path = freshPath(engine, "single")
                    defer { engine.removeStore(at: path) }
                    let seconds = try engine.singleSaves(
                        path: path, posts: singlePosts, world: singleGenerator.world, durability: durability)
                    return Double(singlePosts.count) / seconds
                })
        }

        guard selected("concurrent-writers") else { return }
        let total = sizes.writers * sizes.savesPerWriter
        let writerGenerator = PostGenerator(postCount: total)
        let batches = (0..<sizes.writers).map { writer in
            writerGenerator.posts(writer * sizes.savesPerWriter..<(writer + 1) * sizes.savesPerWriter)
        }
        log("concurrent-writers: \(sizes.writers) writers × \(sizes.savesPerWriter) saves, durable")
        record(
            "concurrent-writers",
            try alternate("concurrent-writers") { engine in
                let path = freshPath(engine, "writers")
                defer { engine.removeStore(at: path) }
                return Double(total)
                    / (try engine.concurrentWriters(path: path, batches: batches, world: writerGenerator.world))
            })
    }

    /// Whether `--only` leaves the write scenario `key` in.
    func selected(_ key: String) -> Bool { onlyWriteScenarios?.contains(key) ?? true }

    // MARK: - Scenarios 4–6

    func readScenarios() throws {
        // The same allocator policy whichever scenarios ran before (see `keepFreedHeapMemory`).
        keepFreedHeapMemory()
        let generator = PostGenerator(postCount: sizes.posts)
        log("read store: building \(sizes.posts) posts for each engine")
        var readers: [any StoreEngine] = []
        var paths: [String] = []
        for engine in engines {
            let path = freshPath(engine, "read")
            try engine.build(path: path, generator: generator, count: sizes.posts, batchSize: sizes.batchSize)
            readers.append(try engine.init(readingStoreAt: path))
            paths.append(path)
        }
        defer {
            for (reader, (engine, path)) in zip(readers, zip(engines, paths)) {
                try? reader.close()
                engine.removeStore(at: path)
            }
        }
        var random = SplitMix64(seed: 1)
        let identities = (0..<sizes.fetchesByID).map { _ in Int64(1 + random.next() % UInt64(sizes.posts)) }
        let dateCount = (sizes.posts + PostGenerator.postsPerDate - 1) / PostGenerator.postsPerDate
        let dates = (0..<sizes.equalityQueries).map { _ in
            PostGenerator.date(ofPostAt: Int(random.next() % UInt64(dateCount)) * PostGenerator.postsPerDate)
        }
        let ranges = (0..<sizes.rangeQueries).map { _ -> ClosedRange<Double> in
            let first = Int(random.next() % UInt64(max(1, sizes.posts - sizes.rangePostCount)))
            let lower = PostGenerator.date(ofPostAt: first)
            return lower...PostGenerator.date(ofPostAt: first + sizes.rangePostCount - 1)
        }
        let words = (0..<sizes.substringQueries).map {
            PostGenerator.substringQueryWords[$0 % PostGenerator.substringQueryWords.count]
        }

        /// Medians of a read, checking that both engines read the same values.
        func read(_ key: String, perSecond count: Int, _ body: (any StoreEngine) throws -> ReadResult) throws {
            var checksums: [Int: Set<Int>] = [0: [], 1: []]
            let values = try alternate(key) { engine in
                let index = engines.firstIndex { $0 == engine }!
                let result = try body(readers[index])
                checksums[index]!.insert(result.checksum)
                return Double(count) / result.seconds
            }
            if checksums[0] != checksums[1] || checksums[0]!.count != 1 {
                notes.append(
                    "WARNING: \(key): the engines read different values (checksums \(checksums[0]!) vs \(checksums[1]!))"
                )
            }
            record(key, values)
        }
        log("fetch-all: \(sizes.posts) posts")
        try read("fetch-all", perSecond: sizes.posts) { try $0.fetchAll() }
        log("fetch-by-id: \(sizes.fetchesByID) random posts")
        try read("fetch-by-id", perSecond: sizes.fetchesByID) { try $0.fetchByID(identities) }
        log(
            "predicates: \(dates.count) equality, \(ranges.count) range (\(sizes.rangePostCount) posts each), \(words.count) substring"
        )
        try read("predicate-indexed-eq", perSecond: dates.count) { try $0.fetchEqual(dates: dates) }
        try read("predicate-indexed-range", perSecond: ranges.count) { try $0.fetchRange(ranges) }
        try read("predicate-substring", perSecond: words.count) { try $0.fetchContaining(words) }

        // EventGraph's run-time FetchFilter (evaluated on committed rows): a note, not a table row.
        if let eventGraph = readers[0] as? EventGraphEngine {
            eventGraph.usesRuntimeFilters = true
            defer { eventGraph.usesRuntimeFilters = false }
            func filterRate(_ count: Int, _ body: () throws -> ReadResult) throws -> Double {
                median(try (0..<sizes.runs).map { _ in Double(count) / (try body().seconds) })
            }
            let equal = try filterRate(dates.count) { try eventGraph.fetchEqual(dates: dates) }
            let range = try filterRate(ranges.count) { try eventGraph.fetchRange(ranges) }
            let substring = try filterRate(words.count) { try eventGraph.fetchContaining(words) }
            notes.append(
                "EventGraph with run-time FetchFilter instead of #Predicate: eq \(format(equal)), "
                    + "range \(format(range)), substring \(format(substring)) queries/s")
        }

        // fetch-all again after each engine compacted its store and opened it again: EventGraph's objects then read
        // checkpoint chunks, loaded lazily (the store above was replayed from its log), SQLite's pages are vacuumed.
        log("fetch-all-compacted: \(sizes.posts) posts, after compaction")
        for index in engines.indices {
            try readers[index].close()
            _ = try engines[index].compact(path: paths[index])
            readers[index] = try engines[index].init(readingStoreAt: paths[index])
        }
        try read("fetch-all-compacted", perSecond: sizes.posts) { try $0.fetchAll() }
    }

    // MARK: - Scenarios 7–10

    /// The scenarios on the large store; with `compactionOnly`, `size-1m` and `compact-1m` alone (no open).
    func largeStoreScenarios(compactionOnly: Bool = false) throws {
        let count = sizes.largePosts
        let generator = PostGenerator(postCount: count)
        var paths: [String] = []
        for engine in engines {
            let path = freshPath(engine, "large")
            log("large store: building \(count) posts for \(engine.name)")
            let seconds = try measureSeconds {
                try engine.build(path: path, generator: generator, count: count, batchSize: sizes.batchSize)
                try engine.settle(path: path)
            }
            log("  built in \(format(seconds)) s")
            paths.append(path)
        }
        defer { for (engine, path) in zip(engines, paths) { engine.removeStore(at: path) } }
        let path = { (engine: any StoreEngine.Type) in paths[self.engines.firstIndex { $0 == engine }!] }

        // The attribute bytes of the live data (for the memory goal and compaction throughput).
        var attributeBytes = 0
        var updatedAttributeBytes = 0
        for index in 0..<count {
            let post = generator.post(at: index)
            attributeBytes += post.attributeByteCount
            updatedAttributeBytes +=
                post.attributeByteCount - post.title.utf8.count
                + generator.updatedTitle(ofPostAt: index, generation: 1).utf8.count
        }
        let worldBytes =
            generator.world.authors.reduce(0) { $0 + 8 + $1.name.utf8.count + $1.email.utf8.count }
            + generator.world.tags.reduce(0) { $0 + $1.utf8.count }
        attributeBytes += worldBytes
        updatedAttributeBytes += worldBytes

        let megabyte = 1_000_000.0
        let diskSizes = engines.map { Double($0.byteCount(at: path($0))) / megabyte }
        record("size-1m", (diskSizes[0], diskSizes[1]))
        log("size-1m: \(format(diskSizes[0])) MB vs \(format(diskSizes[1])) MB")
        // open-1m opens a compacted store (issue 14's goal is "after compaction"): EventGraph's checkpoint, SQLite's
        // vacuumed file. Not measured.
        for engine in engines {
            let seconds = try engine.compact(path: path(engine))
            log("large store: compacted for \(engine.name) before open-1m in \(format(seconds)) s")
        }
        if !compactionOnly { try openScenarios(path: path, count: count, attributeBytes: attributeBytes) }
        try compactionScenario(
            path: path, count: count, generator: generator, updatedAttributeBytes: updatedAttributeBytes)
    }

    /// `open-1m`, `memory-1m`, `memory-open`, `memory-fetch-all` and `open-1m-tail` on the compacted large stores.
    func openScenarios(path: (any StoreEngine.Type) -> String, count: Int, attributeBytes: Int) throws {
        let megabyte = 1_000_000.0
        let generator = PostGenerator(postCount: count)

        let identity = Int64(count / 2)
        var titles: [String: Set<String>] = [:]
        var peaks: [String: [Double]] = [:]
        log("open-1m / memory-1m: open \(count) posts and fetch one, in a child process")
        record(
            "open-1m",
            try alternate("open-1m") { engine in
                let result = try ChildProcess.measureOpen(
                    engine: engine, path: path(engine), identity: identity, cold: false)
                titles[engine.name, default: []].insert(result.title)
                peaks[engine.name, default: []].append(Double(result.peakResidentBytes) / megabyte)
                return result.seconds
            })
        record("memory-1m", (median(peaks[EventGraphEngine.name]!), median(peaks[GRDBEngine.name]!)))
        if titles[EventGraphEngine.name] != titles[GRDBEngine.name] || titles.values.contains(where: { $0.count != 1 })
        {
            notes.append("WARNING: open-1m: the engines fetched different titles \(titles)")
        }
        var coldCached: [Int] = []
        let cold = try alternate("open-1m cold") { engine in
            let result = try ChildProcess.measureOpen(
                engine: engine, path: path(engine), identity: identity, cold: true)
            coldCached.append(result.totalPages == 0 ? 0 : 100 * result.cachedPages / result.totalPages)
            return result.seconds
        }
        notes.append(
            "open-1m with a cold page cache (posix_fadvise DONTNEED on the store's files; at most "
                + "\(coldCached.max() ?? 0)% of their pages still cached): EventGraph \(format(cold.0)) s, GRDB \(format(cold.1)) s"
        )
        var openPeaks: [String: [Double]] = [:]
        _ = try alternate("memory-open") { engine in
            let result = try ChildProcess.measureOpen(
                engine: engine, path: path(engine), identity: identity, cold: false, work: .openOnly)
            openPeaks[engine.name, default: []].append(Double(result.peakResidentBytes) / megabyte)
            return result.seconds
        }
        let openPeak = (median(openPeaks[EventGraphEngine.name]!), median(openPeaks[GRDBEngine.name]!))
        record("memory-open", openPeak)
        notes.append(
            "memory-open: peak RSS of a process that only opens the store (issue 14's goal: ≤ 0.1× the attribute "
                + "bytes): EventGraph \(format(openPeak.0)) MB = \(format(openPeak.0 / (Double(attributeBytes) / megabyte)))×"
        )
        try measureMemoryOfFetchAll(path: path, attributeBytes: attributeBytes)
        try measureOpenWithTail(
            "open-1m-tail", tailCount: Self.tailTransactionCount, path: path, identity: identity, generator: generator)
        try measureOpenWithLongTail(path: path, identity: identity, generator: generator)
        if largeOnly { return }
        notes.append(
            "memory-1m: the posts' attribute bytes are \(format(Double(attributeBytes) / megabyte)) MB; EventGraph's peak RSS is "
                + "\(format(median(peaks[EventGraphEngine.name]!) / (Double(attributeBytes) / megabyte)))× that")
    }

    /// `memory-fetch-all` (issue 14's memory goal: peak RSS of a fetch-all of the large store reading every attribute
    /// ≤ 1.0× the attribute bytes): a child process per measurement opens the store, fetches every post, reads every
    /// attribute and keeps the results until it reports its `VmHWM`.
    func measureMemoryOfFetchAll(path: (any StoreEngine.Type) -> String, attributeBytes: Int) throws {
        let megabyte = 1_000_000.0
        var peaks: [String: [Double]] = [:]
        var checksums: [String: Set<String>] = [:]
        log("memory-fetch-all: open \(sizes.largePosts) posts and fetch them all, in a child process")
        let seconds = try alternate("memory-fetch-all") { engine in
            let result = try ChildProcess.measureOpen(
                engine: engine, path: path(engine), identity: 0, cold: false, work: .fetchAll)
            checksums[engine.name, default: []].insert(result.title)
            peaks[engine.name, default: []].append(Double(result.peakResidentBytes) / megabyte)
            return result.seconds
        }
        let peak = (median(peaks[EventGraphEngine.name]!), median(peaks[GRDBEngine.name]!))
        record("memory-fetch-all", peak)
        if checksums[EventGraphEngine.name] != checksums[GRDBEngine.name]
            || checksums.values.contains(where: { $0.count != 1 })
        {
            notes.append("WARNING: memory-fetch-all: the engines read different values \(checksums)")
        }
        let attributeMegabytes = Double(attributeBytes) / megabyte
        notes.append(
            "memory-fetch-all: peak RSS of open + fetch of every post reading every attribute (issue 14's goal: ≤ 1.0× "
                + "the attribute bytes, \(format(attributeMegabytes)) MB): EventGraph \(format(peak.0)) MB = "
                + "\(format(peak.0 / attributeMegabytes))×, GRDB \(format(peak.1)) MB = "
                + "\(format(peak.1 / attributeMegabytes))×; open + fetch took \(format(seconds.0)) s vs \(format(seconds.1)) s"
        )
    }

    /// `compact-1m`: every title updated, then a copy of each store compacted.
    func compactionScenario(
        path: (any StoreEngine.Type) -> String, count: Int, generator: PostGenerator, updatedAttributeBytes: Int
    ) throws {
        let megabyte = 1_000_000.0
        for engine in engines {
            log("compact-1m: updating \(count) titles for \(engine.name)")
            try engine.updateTitles(
                path: path(engine), generator: generator, count: count, batchSize: self.sizes.batchSize)
            try engine.settle(path: path(engine))
        }
        var compactedSizes: [String: Double] = [:]
        let liveMegabytes = Double(updatedAttributeBytes) / megabyte
        record(
            "compact-1m",
            try alternate("compact-1m") { engine in
                // Each run compacts a copy of the updated store (the copy is not measured).
                let copy = try copyOfStore(at: path(engine), engine, label: "compact")
                defer { engine.removeStore(at: copy) }
                let before = Double(engine.byteCount(at: copy)) / megabyte
                let seconds = try engine.compact(path: copy)
                compactedSizes[engine.name] = Double(engine.byteCount(at: copy)) / megabyte
                log("    \(engine.name): \(format(before)) MB → \(format(compactedSizes[engine.name]!)) MB")
                return liveMegabytes / seconds
            })
        notes.append(
            "compact-1m: MB/s of live attribute data (\(format(liveMegabytes)) MB after \(count) title updates); "
                + "compacted size EventGraph \(format(compactedSizes[EventGraphEngine.name] ?? 0)) MB, "
                + "GRDB \(format(compactedSizes[GRDBEngine.name] ?? 0)) MB")
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// Three significant digits, with thousands separators for large values.
func format(_ value: Double) -> String {
    if value >= 1000 {
        let rounded = Int(value.rounded())
        var digits = String(rounded)
        var grouped = ""
        while digits.count > 3 {
            grouped = "," + digits.suffix(3) + grouped
            digits.removeLast(3)
        }
        return digits + grouped
    }
    if value >= 100 { return String(format: "%.0f", value) }
    if value >= 10 { return String(format: "%.1f", value) }
    if value >= 1 { return String(format: "%.2f", value) }
    return String(format: "%.3g", value)
}

extension Comparison {
    /// The number of single-post transactions after the checkpoint in `open-1m-tail`.
    static let tailTransactionCount = 10_000

    /// A copy of an engine's store (its lock and shared-memory files left out), at a new path.
    func copyOfStore(at path: String, _ engine: any StoreEngine.Type, label: String) throws -> String {
        let copy = freshPath(engine, label)
        for file in engine.storeFiles(at: path) where !file.hasSuffix(".lock") && !file.hasSuffix("-shm") {
            try FileManager.default.copyItem(atPath: file, toPath: copy + file.dropFirst(path.count))
        }
        return copy
    }

    /// `open-1m-tail` and `open-10m-tail`: a copy of each compacted large store gets a tail of `tailCount`
    /// single-post title updates (one save each, not measured), then open + first fetch is measured in a child
    /// process as for `open-1m`.
    func measureOpenWithTail(
        _ key: String, tailCount: Int, path: (any StoreEngine.Type) -> String, identity: Int64,
        generator: PostGenerator
    ) throws {
        var copies: [String: String] = [:]
        for engine in engines {
            let copy = try copyOfStore(at: path(engine), engine, label: key)
            log("\(key): \(tailCount) single-post saves for \(engine.name)")
            let seconds = try measureSeconds {
                try engine.updateTitles(path: copy, generator: generator, count: tailCount, batchSize: 1)
            }
            log("  written in \(format(seconds)) s")
            copies[engine.name] = copy
        }
        defer { for engine in engines { engine.removeStore(at: copies[engine.name]!) } }
        record(
            key,
            try alternate(key) { engine in
                try ChildProcess.measureOpen(
                    engine: engine, path: copies[engine.name]!, identity: identity, cold: false
                ).seconds
            })
        let megabyte = 1_000_000.0
        let sizes = engines.map { Double($0.byteCount(at: copies[$0.name]!)) / megabyte }
        notes.append(
            "\(key): \(self.sizes.largePosts) posts compacted, then \(tailCount) single-post saves; store "
                + "\(format(sizes[0])) MB (EventGraph) vs \(format(sizes[1])) MB (GRDB)")
    }

    /// `open-10m-tail` (issue 14): the compacted large store (1M posts; 100,000 at `--quick`) with a tail of one
    /// single-post title save per 10 posts (100,000; 10,000 at `--quick`). Then, for EventGraph alone, the same saves
    /// on another copy with an automatic checkpoint every tenth of them: where it fires and how long that save
    /// takes, as notes.
    func measureOpenWithLongTail(
        path: (any StoreEngine.Type) -> String, identity: Int64, generator: PostGenerator
    ) throws {
        let tailCount = sizes.largePosts / 10
        try measureOpenWithTail(
            "open-10m-tail", tailCount: tailCount, path: path, identity: identity, generator: generator)

        let threshold = max(1, tailCount / 10)
        let store = try copyOfStore(at: path(EventGraphEngine.self), EventGraphEngine.self, label: "auto-checkpoint")
        defer { EventGraphEngine.removeStore(at: store) }
        log("open-10m-tail: \(tailCount) saves with an automatic checkpoint every \(threshold) transactions")
        let saves = try EventGraphEngine.updateTitlesWithAutomaticCheckpoints(
            path: store, generator: generator, count: tailCount, threshold: threshold)
        let opened = try ChildProcess.measureOpen(
            engine: EventGraphEngine.self, path: store, identity: identity, cold: false)
        let points = saves.firings.map { "\($0.saveNumber) (\(format($0.seconds)) s)" }.joined(separator: ", ")
        let trigger = saves.firstTrigger.map {
            "save \($0.saveNumber), which started the first, took \(format($0.seconds)) s; "
        }
        notes.append(
            "open-10m-tail, automatic checkpoint every \(threshold) transactions: fired \(saves.firings.count) times in "
                + "\(tailCount) single-post saves, after saves \(points.isEmpty ? "none" : points); \(trigger ?? "")"
                + "the longest save (\(saves.longest.saveNumber)) took \(format(saves.longest.seconds)) s, the 99th "
                + "percentile \(format(saves.p99SaveSeconds * 1000)) ms; the other saves took "
                + "\(format(saves.medianSaveSeconds * 1000)) ms (median); close after the saves "
                + "\(format(saves.closeSeconds)) s; open + first fetch afterwards "
                + "\(format(opened.seconds)) s"
        )
    }
}
