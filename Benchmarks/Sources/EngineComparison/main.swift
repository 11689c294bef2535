// `Benchmarks/compare`: EventGraph against SQLite (GRDB) on the same workload, in one run.
// Usage: EngineComparison [--quick] [--json PATH] [--chart PATH] [--markdown PATH] [--directory DIR] [--runs N] [--reads]
// [--writes] [--large] [--stores] [--only KEYS]
import Foundation
import Workload

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    exit(2)
}

var arguments = Array(CommandLine.arguments.dropFirst())
@MainActor func value(after flag: String) -> String? {
    guard let index = arguments.firstIndex(of: flag) else { return nil }
    guard index + 1 < arguments.count else { fail("\(flag) needs a value") }
    let value = arguments[index + 1]
    arguments.removeSubrange(index...index + 1)
    return value
}
@MainActor func flag(_ name: String) -> Bool {
    guard let index = arguments.firstIndex(of: name) else { return false }
    arguments.remove(at: index)
    return true
}

// The hidden subcommand the parent runs in a child process for open-1m and the memory scenarios.
if arguments.first == "open-store" {
    arguments.removeFirst()
    guard let name = value(after: "--engine"), let engine = engine(named: name), let path = value(after: "--path"),
        let identity = value(after: "--identity").flatMap(Int64.init)
    else { fail("open-store needs --engine, --path and --identity") }
    guard let work = ChildProcess.Work(rawValue: value(after: "--work") ?? "first-fetch") else {
        fail("open-store: --work takes first-fetch, open-only or fetch-all")
    }
    do {
        try ChildProcess.openStore(engine: engine, path: path, identity: identity, cold: flag("--cold"), work: work)
        exit(0)
    } catch {
        fail("open-store: \(error)")
    }
}

// A hidden subcommand that prints generated posts (to check what the workload's text looks like).
if arguments.first == "sample-posts" {
    let count = arguments.count > 1 ? Int(arguments[1]) ?? 3 : 3
    let generator = PostGenerator(postCount: count)
    for index in 0..<count {
        let post = generator.post(at: index)
        print(post.title, post.body, post.excerpt, post.url, separator: "\n")
    }
    exit(0)
}

if flag("--help") || flag("-h") {
    print(
        """
        usage: compare [--quick] [--json PATH] [--chart PATH] [--markdown PATH] [--directory DIR] [--runs N] [--reads] [--writes] [--large] [--stores] [--only KEYS]
          --quick          reduced sizes (under 5 minutes after the build)
          --json PATH      write the results as a JSON array of {scenario, unit, eventgraph, grdb, ratio}
          --chart PATH     write an SVG bar chart of the ratios
          --markdown PATH  write the table and notes as Markdown
          --directory DIR  where the stores are made (default: a new directory in $TMPDIR or /tmp)
          --runs N         runs per scenario and engine (default 3; the median is reported)
          --reads          only the read scenarios (fetch-all, fetch-by-id, predicates), e.g. for a profile
          --writes         only the write scenarios (bulk-insert, single saves, writers) and compact-1m
          --large          only the large store's open scenarios (open-1m, memory-*, open-1m-tail, open-10m-tail)
          --stores         only the two cross-store notes (issue 12: a save and a fetch across two stores against one)
          --only KEYS      only these write scenarios, comma-separated (bulk-insert, single-save-durable,
                           single-save-relaxed, concurrent-writers, compact-1m), at the run's size (full unless
                           --quick); compact-1m builds the large store and reports size-1m too
        """)
    exit(0)
}
let quick = flag("--quick")
let readsOnly = flag("--reads")
let writesOnly = flag("--writes")
let largeOnly = flag("--large")
let storesOnly = flag("--stores")
let jsonPath = value(after: "--json")
let chartPath = value(after: "--chart")
let markdownPath = value(after: "--markdown")
let onlyKeys = value(after: "--only").map { Set($0.split(separator: ",").map(String.init)) }
let writeKeys: Set<String> = [
    "bulk-insert", "single-save-durable", "single-save-relaxed", "concurrent-writers", "compact-1m",
]
if let onlyKeys, onlyKeys.isEmpty || !onlyKeys.isSubset(of: writeKeys) {
    fail("--only takes write scenarios, comma-separated: \(writeKeys.sorted().joined(separator: ", "))")
}
var sizes = quick ? Sizes.quick : Sizes.full
if let runs = value(after: "--runs") {
    guard let count = Int(runs), count >= 1 else { fail("--runs takes a positive number") }
    sizes.runs = count
}
let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
let directory = value(after: "--directory") ?? "\(base)/eventgraph-compare-\(getpid())"
guard arguments.isEmpty else { fail("unknown arguments \(arguments); see --help") }
try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)

let started = Date()
let comparison = Comparison(sizes: sizes, directory: directory)
comparison.largeOnly = largeOnly
comparison.storesOnly = storesOnly
comparison.onlyWriteScenarios = onlyKeys
do {
    try comparison.run(readsOnly: readsOnly, writesOnly: writesOnly)
} catch {
    fail("\(error)")
}
try? FileManager.default.removeItem(atPath: directory)
let elapsed = Date().timeIntervalSince(started)

let mode = quick ? "quick" : "full"
let subtitle =
    "\(mode) run: \(sizes.posts) posts, \(sizes.largePosts) for the -1m rows; median of \(sizes.runs) runs; "
    + "\(ISO8601DateFormatter().string(from: started).prefix(10)); SQLite \(GRDBEngine.sqliteVersion)"
print("")
print("EventGraph vs SQLite (GRDB), \(subtitle)")
print("ratio > 1: EventGraph better (its value / GRDB's for rates, GRDB's / its for s and MB)")
print("")
print(Report.table(comparison.results))
print("")
for note in comparison.notes { print("- \(note)") }
print(String(format: "- total time %.0f s", elapsed))

do {
    if let jsonPath { try Report.json(comparison.results).write(to: URL(fileURLWithPath: jsonPath)) }
    if let chartPath {
        try Report.svg(comparison.results, subtitle: subtitle).write(
            toFile: chartPath, atomically: true, encoding: .utf8)
    }
    if let markdownPath {
        let text =
            Report.markdown(comparison.results) + "\n\n" + comparison.notes.map { "- \($0)" }.joined(separator: "\n")
            + "\n"
        try text.write(toFile: markdownPath, atomically: true, encoding: .utf8)
    }
} catch {
    fail("writing the results: \(error)")
}
