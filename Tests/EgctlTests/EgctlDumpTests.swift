import EventGraph
import Foundation
import Testing

/// Dates and numbers at the edges of `Double`.
final class Moment: ManagedObject {
    @Attribute var label: String = ""
    @Attribute var when: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var measure: Double = 0
}

@Suite("egctl dump prints non-finite dates and numbers as what they are")
struct EgctlDumpTests {
    static let values: [(label: String, seconds: Double, printed: String)] = [
        ("past", -.infinity, "-inf"), ("future", .infinity, "inf"), ("unknown", .nan, "nan"),
        ("epoch", 0, "2001-01-01T00:00:00.000Z"),
    ]

    /// A store with one object per value, each with the value as its date and as its number.
    static func makeStore(in scratch: Scratch) throws -> String {
        let path = scratch.file("moments.eglog")
        let container = try ModelContainer(path: path, model: try ObjectModel(types: [Moment.self]))
        let context = container.newBackgroundContext()
        for value in values {
            let moment = Moment()
            context.insert(moment)
            moment.label = value.label
            moment.when = Date(timeIntervalSinceReferenceDate: value.seconds)
            moment.measure = value.seconds
        }
        try context.save()
        try container.close()
        return path
    }

    @Test func text() throws {
        let scratch = Scratch()
        let result = try Egctl.run("dump", try Self.makeStore(in: scratch), "--entity", "Moment")
        #expect(result.status == 0, "\(result.stderr)")
        for value in Self.values {
            #expect(result.stdout.contains("when = \(value.printed)\n"), "\(value.label): \(result.stdout)")
        }
    }

    @Test func json() throws {
        let scratch = Scratch()
        let result = try Egctl.run("dump", try Self.makeStore(in: scratch), "--entity", "Moment", "--format", "json")
        #expect(result.status == 0, "\(result.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        let whenByLabel = Dictionary(uniqueKeysWithValues: rows.map { ($0["label"] as! String, $0["when"] as? String) })
        for value in Self.values {
            #expect(whenByLabel[value.label] == value.printed, "\(value.label)")
        }
    }

    @Test func csv() throws {
        let scratch = Scratch()
        let result = try Egctl.run("dump", try Self.makeStore(in: scratch), "--entity", "Moment", "--format", "csv")
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false)
        }
        let header = try #require(lines.first).map(String.init)
        let label = try #require(header.firstIndex(of: "label"))
        let when = try #require(header.firstIndex(of: "when"))
        for value in Self.values {
            let row = try #require(lines.first { $0[label] == value.label }, "\(value.label)")
            #expect(row[when] == value.printed[...], "\(value.label)")
        }
    }
}
