import EventGraph
import Foundation
import Testing

/// An object with integers beyond `Double`'s 53-bit mantissa, a text and a date for `--where`.
final class Gauge: ManagedObject {
    @Attribute var identity: Int64 = 0
    @Attribute var label: String = ""
    @Attribute var reading: Double = 0
    @Attribute var taken: Date = Date(timeIntervalSinceReferenceDate: 0)
}

@Suite("egctl dump --where is the library's FetchFilter, with exact integers")
struct EgctlWhereTests {
    /// 2^53, 2^53 + 1 and 2^53 + 2: the first two are the same `Double`.
    static let gauges: [(identity: Int64, label: String, reading: Double, taken: String)] = [
        (9_007_199_254_740_992, "alpha", 1.5, "2020-01-01T00:00:00Z"),
        (9_007_199_254_740_993, "beta", -2, "2021-06-15T12:00:00Z"),
        (9_007_199_254_740_994, "gamma \"quoted\"", 3.25, "2024-05-01T12:00:00Z"),
        (7, "delta", .infinity, "1999-12-31T23:59:59Z"),
    ]

    static func makeStore(in scratch: Scratch) throws -> String {
        let path = scratch.file("gauges.eglog")
        let container = try ModelContainer(path: path, model: try ObjectModel(types: [Gauge.self]))
        let context = container.newBackgroundContext()
        let dates = ISO8601DateFormatter()
        for value in gauges {
            let gauge = Gauge()
            context.insert(gauge)
            gauge.identity = value.identity
            gauge.label = value.label
            gauge.reading = value.reading
            gauge.taken = try #require(dates.date(from: value.taken))
        }
        try context.save()
        try container.close()
        return path
    }

    /// The labels `dump --where` selects.
    static func labels(_ store: String, _ filter: String) throws -> [String] {
        let result = try Egctl.run("dump", store, "--entity", "Gauge", "--where", filter, "--format", "json")
        #expect(result.status == 0, "\(filter): \(result.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        return rows.compactMap { $0["label"] as? String }.sorted()
    }

    @Test("identity == 9007199254740993 matches exactly one object")
    func exactInteger() throws {
        let scratch = Scratch()
        let store = try Self.makeStore(in: scratch)
        #expect(try Self.labels(store, "identity == 9007199254740993") == ["beta"])
        #expect(try Self.labels(store, "identity != 9007199254740992") == ["beta", "delta", "gamma \"quoted\""])
        #expect(try Self.labels(store, "identity > 9007199254740992") == ["beta", "gamma \"quoted\""])
    }

    @Test(
        "the grammar: and, or, not, parentheses, string operators, literals",
        arguments: [
            ("label == \"beta\" or identity < 10", ["beta", "delta"]),
            ("not (label beginsWith \"a\" or label endsWith \"a\")", ["gamma \"quoted\""]),
            ("label contains \"\\\"quoted\\\"\"", ["gamma \"quoted\""]),
            ("reading >= 1.5 and reading < 3.5", ["alpha", "gamma \"quoted\""]),
            ("reading > 1e300", ["delta"]),
            ("taken < date(\"2021-01-01T00:00:00Z\")", ["alpha", "delta"]),
            ("taken == date(\"2021-06-15T12:00:00.000Z\") AND NOT label == nil", ["beta"]),
            ("identity < 10 or label == \"alpha\" and reading < 0", ["delta"]),
        ])
    func grammar(filter: String, expected: [String]) throws {
        let scratch = Scratch()
        let store = try Self.makeStore(in: scratch)
        #expect(try Self.labels(store, filter) == expected.sorted(), "\(filter)")
    }

    @Test(
        "a malformed filter is a usage error naming where it fails",
        arguments: [
            ("identity ~ 3", "character 9"), ("identity == ", "expects a value"), ("(identity == 3", "')'"),
            ("label == \"open", "unterminated string"), ("taken < date(\"yesterday\")", "ISO 8601"),
            ("nosuch == 3", "no property named 'nosuch'"),
        ])
    func malformed(filter: String, expected: String) throws {
        let scratch = Scratch()
        let result = try Egctl.run(
            "dump", try Self.makeStore(in: scratch), "--entity", "Gauge", "--where", filter)
        #expect(result.status == 2, "\(filter): \(result.stderr)")
        #expect(result.stderr.contains(expected), "\(filter): \(result.stderr)")
    }
}
