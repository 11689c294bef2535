import EventGraph
import Foundation
import Testing

/// A counter whose values are beyond `Double`'s 53-bit mantissa (not unique, so filters scan rows).
final class WideCounter: ManagedObject {
    @Attribute var count: Int64 = 0
    @Attribute var ratio: Double = 0
}

@Suite("FetchFilter(parsing:) builds the filter the text spells")
struct FetchFilterParsingTests {
    @Test(
        arguments: [
            ("a == 1", FetchFilter.compare("a", .equal, .int64(1))),
            ("a != -9007199254740993", .compare("a", .notEqual, .int64(-9_007_199_254_740_993))),
            ("a < 1.5", .compare("a", .less, .double(1.5))),
            ("a <= 1e3", .compare("a", .lessOrEqual, .double(1000))),
            ("a > \"x \\\"y\\\" \\\\\"", .compare("a", .greater, .string("x \"y\" \\"))),
            ("a >= true", .compare("a", .greaterOrEqual, .bool(true))),
            ("a == nil", .compare("a", .equal, .null)),
            ("a == NULL", .compare("a", .equal, .null)),
            ("a CONTAINS \"b\"", .compare("a", .contains, .string("b"))),
            ("a beginswith \"b\"", .compare("a", .beginsWith, .string("b"))),
            ("a endsWith \"b\"", .compare("a", .endsWith, .string("b"))),
            (
                "a == date(\"2001-01-01T00:01:00Z\")",
                .compare("a", .equal, .date(Date(timeIntervalSinceReferenceDate: 60)))
            ),
            (
                "a == date(\"2001-01-01T00:00:00.250Z\")",
                .compare("a", .equal, .date(Date(timeIntervalSinceReferenceDate: 0.25)))
            ),
            (
                "a == 1 or b == 2 and not c == 3",
                .or([
                    .compare("a", .equal, .int64(1)),
                    .and([.compare("b", .equal, .int64(2)), .not(.compare("c", .equal, .int64(3)))]),
                ])
            ),
            (
                "(a == 1 or b == 2) and c == 3",
                .and([
                    .or([.compare("a", .equal, .int64(1)), .compare("b", .equal, .int64(2))]),
                    .compare("c", .equal, .int64(3)),
                ])
            ),
            ("not not a==1", .not(.not(.compare("a", .equal, .int64(1))))),
        ])
    func parses(text: String, expected: FetchFilter) throws {
        #expect(try FetchFilter(parsing: text) == expected)
    }

    @Test(
        arguments: [
            ("", "is empty"), ("a", "expects an operator"), ("a = 1", "use == or !="), ("a == 1 b", "unexpected 'b'"),
            ("== 1", "expects an attribute name"), ("and == 1", "expects an attribute name"), ("a == x1", "'x1'"),
            ("a == \"b\\n\"", "unknown escape"), ("a == date(3)", "date(\""), ("(a == 1", "misses a ')'"),
        ])
    func rejects(text: String, problem: String) {
        #expect {
            try FetchFilter(parsing: text)
        } throws: { error in
            let error = error as? EventGraphError
            return error?.code == .invalidArgument && error?.message.contains(problem) == true
                && error?.message.contains("'\(text)'") == true
        }
    }
}

@Suite("FetchFilter compares integers exactly")
struct ExactIntegerFilterTests {
    @Test(
        arguments: [
            ("count == 9007199254740993", [9_007_199_254_740_993]),
            ("count != 9007199254740993", [9_007_199_254_740_992, 9_007_199_254_740_994]),
            ("count < 9007199254740993", [9_007_199_254_740_992]),
            ("count >= 9007199254740993", [9_007_199_254_740_993, 9_007_199_254_740_994]),
            // 2^53 as a Double: only the integer that equals it exactly.
            ("count == 9007199254740992.0", [9_007_199_254_740_992]),
            ("count > 9007199254740992.0", [9_007_199_254_740_993, 9_007_199_254_740_994]),
            ("count < 9.2e18", [9_007_199_254_740_992, 9_007_199_254_740_993, 9_007_199_254_740_994]),
        ] as [(String, [Int64])])
    func fetch(filter: String, expected: [Int64]) throws {
        let container = try ModelContainer(inMemoryWith: try ObjectModel(types: [WideCounter.self]))
        let context = container.newBackgroundContext()
        for count: Int64 in [9_007_199_254_740_992, 9_007_199_254_740_993, 9_007_199_254_740_994] {
            let counter = WideCounter()
            context.insert(counter)
            counter.count = count
        }
        try context.save()
        let fetched = try container.newBackgroundContext().fetch(
            FetchDescriptor<WideCounter>(filter: try FetchFilter(parsing: filter)))
        #expect(fetched.map(\.count).sorted() == expected, "\(filter)")
    }
}

@Suite("ObjectID(uriString:) reads the URI form the library prints")
struct ObjectIDURITests {
    @Test(arguments: [
        ObjectID(storeUUID: UUID(), entityName: "Post", key: 42),
        ObjectID(storeUUID: UUID(), entityName: "Post", key: 7, isTemporary: true),
        ObjectID(storeUUID: UUID(), entityName: "Café", key: .max),
    ])
    func roundTrips(id: ObjectID) {
        #expect(ObjectID(uriString: id.uriString) == id)
        #expect(ObjectID(uri: id.uriRepresentation) == id)
    }

    @Test(arguments: [
        "", "eventgraph://", "eventgraph:///Post/1", "eventgraph://not-a-uuid/Post/1",
        "eventgraph://00000000-0000-0000-0000-000000000000//1",
        "eventgraph://00000000-0000-0000-0000-000000000000/Post/",
        "eventgraph://00000000-0000-0000-0000-000000000000/Post/-1",
        "eventgraph://00000000-0000-0000-0000-000000000000/Post/1/2",
        "http://00000000-0000-0000-0000-000000000000/Post/1",
    ])
    func rejects(text: String) {
        #expect(ObjectID(uriString: text) == nil)
    }
}
