import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// Column scans must decide exactly as the row filter does, whatever the values: the random values below include
/// the cases where a byte search and `String`'s character-wise tests differ (combining marks, CR LF, the Kelvin
/// sign that is canonically a "K"), NaN, nulls and values of another kind than the operand.
@Suite("Column scans agree with the row filter")
struct ColumnScanTests {
    static let words = ["K", "\u{212A}", "e", "\u{301}", "é", "\r", "\n", "\r\n", "ab", "AB", " ", "😀", "x", ""]

    private static func randomValue(_ generator: inout SeededGenerator) -> AttributeValue {
        switch generator.next() % 9 {
        case 0: return .null
        case 1: return .int64(Int64(generator.next() % 7) - 3)
        case 2: return .int32(Int32(generator.next() % 7) - 3)
        case 3: return .double([-1.5, 0, 2, .nan, .infinity][Int(generator.next() % 5)])
        case 4: return .date([-1.5, 0, 2, .nan][Int(generator.next() % 4)])
        case 5: return .url("ab")
        default:
            let count = Int(generator.next() % 4)
            return .string((0..<count).map { _ in words[Int(generator.next() % UInt64(words.count))] }.joined())
        }
    }

    private static func randomNode(_ generator: inout SeededGenerator, depth: Int) -> ResolvedFilter.Node {
        let comparisons: [FetchFilter.Comparison] = [
            .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .contains, .beginsWith, .endsWith,
        ]
        if depth > 0 {
            switch generator.next() % 5 {
            case 0: return .and([randomNode(&generator, depth: depth - 1), randomNode(&generator, depth: depth - 1)])
            case 1: return .or([randomNode(&generator, depth: depth - 1), randomNode(&generator, depth: depth - 1)])
            case 2: return .not(randomNode(&generator, depth: depth - 1))
            default: break
            }
        }
        let comparison = comparisons[Int(generator.next() % UInt64(comparisons.count))]
        // Property 2 is beyond every row: it reads as null.
        return .compare(Int(generator.next() % 3), comparison, randomValue(&generator))
    }

    @Test("random values and filters: the scan's slots are the rows the filter matches")
    func randomFilters() throws {
        let seed = TestSeed.make()
        var generator = SeededGenerator(seed: seed)
        for round in 0..<20 {
            var table = EntityColumns(entityIndex: 0)
            let count = 1 + Int(generator.next() % 3_000)
            for key in 1...UInt64(count) {
                let values: [PropertyValue] = [
                    .attribute(Self.randomValue(&generator)), .attribute(Self.randomValue(&generator)),
                ]
                table.put(Row(entityIndex: 0, key: key, version: 1, values: values))
                if generator.next() % 10 == 0 { table.remove(key: key) }
            }
            for _ in 0..<20 {
                let filter = ResolvedFilter(root: Self.randomNode(&generator, depth: 2))
                let expected = table.liveRows.filter { row in
                    filter.matches { index in
                        guard index < row.values.count, case .attribute(let value) = row.values[index] else {
                            return .null
                        }
                        return value
                    }
                }.map(\.key)
                let scanned = try table.slots(matching: filter).map { table.row(atSlot: $0).key }
                #expect(scanned == expected, "round \(round), filter \(filter.root), seed \(seed)")
                if scanned != expected { return }
            }
        }
    }

    @Test(
        "substring, prefix and suffix on ASCII text take the byte search and agree with String",
        arguments: [FetchFilter.Comparison.contains, .beginsWith, .endsWith])
    func asciiText(_ comparison: FetchFilter.Comparison) throws {
        var table = EntityColumns(entityIndex: 0)
        let titles = ["alpha beta", "beta", "gamma alphabet", "", "al", "line\r\nbreak", "ALPHA"]
        for (key, title) in titles.enumerated() {
            table.put(Row(entityIndex: 0, key: UInt64(key), version: 1, values: [.attribute(.string(title))]))
        }
        for operand in ["alpha", "beta", "a", "al", "line", "break", "\r", "\n"] {
            let filter = ResolvedFilter(root: .compare(0, comparison, .string(operand)))
            let expected = titles.indices.filter { index in filter.matches { _ in .string(titles[index]) } }
            #expect(try table.slots(matching: filter) == expected, "\(comparison) \(operand.debugDescription)")
        }
    }
}
