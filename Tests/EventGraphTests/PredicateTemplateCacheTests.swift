import Foundation
import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// A `#Predicate` translated once per expression shape (``PredicateTemplateCache``): a repeated query with other
/// captured values must get the results of its own values, and two predicates of one type on different attributes
/// must not share a translation.
@Suite("Predicate translations are cached by expression shape, never by value")
struct PredicateTemplateCacheTests {
    /// Saves `count` samples with random small numbers and strings; returns the container and a fresh context.
    private func makeSamples(_ generator: inout SeededGenerator, count: Int = 200) throws -> (
        ModelContainer, ObjectContext
    ) {
        let container = try ModelContainer(inMemoryWith: TestModels.samples)
        let writer = container.newBackgroundContext()
        let words = ["ant", "bee", "cat", "antelope", "bat", ""]
        for _ in 0..<count {
            let sample = Sample()
            writer.insert(sample)
            sample.int64 = Int64(generator.next() % 20)
            sample.double = Double(generator.next() % 10) / 2
            sample.string = words[Int(generator.next() % UInt64(words.count))]
            sample.optionalString = generator.next() % 3 == 0 ? nil : words[Int(generator.next() % 3)]
        }
        try writer.save()
        return (container, container.newBackgroundContext())
    }

    private func keys(_ samples: [Sample]) -> [UInt64] { samples.map(\.objectID.key).sorted() }

    @Test("one predicate site with a captured value that changes on every call: each call gets its own value's rows")
    func changingCapturedValues() throws {
        let seed = TestSeed.make()
        var generator = SeededGenerator(seed: seed)
        let (container, context) = try makeSamples(&generator)
        _ = container
        let all = try context.fetch(FetchDescriptor<Sample>())
        for _ in 0..<40 {
            let number = Int64(generator.next() % 22)
            let equal = try context.fetch(FetchDescriptor<Sample>(predicate: #Predicate { $0.int64 == number }))
            #expect(keys(equal) == keys(all.filter { $0.int64 == number }), "seed \(seed), \(number)")

            let lower = Double(generator.next() % 6)
            let upper = lower + Double(generator.next() % 3)
            let range = try context.fetch(
                FetchDescriptor<Sample>(predicate: #Predicate { $0.double >= lower && $0.double <= upper }))
            #expect(keys(range) == keys(all.filter { $0.double >= lower && $0.double <= upper }), "seed \(seed)")
            // The same expression type with other operators (`PredicateExpressions.Comparison` holds its operator
            // as a value, not in its type).
            let open = try context.fetch(
                FetchDescriptor<Sample>(predicate: #Predicate { $0.double > lower && $0.double < upper }))
            #expect(keys(open) == keys(all.filter { $0.double > lower && $0.double < upper }), "seed \(seed)")

            // An empty word does not translate (every string contains it), a non-empty one does: the cached shape
            // must check each call's value.
            let word = ["", "at", "ant", "zz"][Int(generator.next() % 4)]
            let containing = try context.fetch(
                FetchDescriptor<Sample>(predicate: #Predicate { $0.string.contains(word) }))
            #expect(
                keys(containing) == keys(all.filter { word.isEmpty || $0.string.contains(word) }),
                "seed \(seed), '\(word)'")

            // `nil` and a string, alternating, on an optional attribute.
            let optional: String? = generator.next() % 2 == 0 ? nil : "bee"
            let matching = try context.fetch(
                FetchDescriptor<Sample>(predicate: #Predicate { $0.optionalString == optional }))
            #expect(keys(matching) == keys(all.filter { $0.optionalString == optional }), "seed \(seed)")
        }
    }

    /// Two predicate sites of the same expression type on different attributes (one of them transient, which never
    /// translates), chosen by `which`.
    private func predicate(_ which: Int, _ text: String) -> Predicate<Sample> {
        let onString = #Predicate<Sample> { $0.string == text }
        let onScratch = #Predicate<Sample> { $0.scratch == text }
        let onBoth = #Predicate<Sample> { $0.string == text && $0.scratch == text }
        return [onString, onScratch, onBoth][which]
    }

    @Test("predicates of one expression type on different attributes do not share a translation")
    func sameTypeOtherAttributes() throws {
        let seed = TestSeed.make()
        var generator = SeededGenerator(seed: seed)
        let (container, context) = try makeSamples(&generator)
        _ = container
        let all = try context.fetch(FetchDescriptor<Sample>())
        let cache = PredicateTemplateCache()
        for _ in 0..<30 {
            let which = Int(generator.next() % 3)
            let text = ["", "cat", "bee"][Int(generator.next() % 3)]
            let expected = all.filter { sample in
                switch which {
                case 0: sample.string == text
                case 1: sample.scratch == text
                default: sample.string == text && sample.scratch == text
                }
            }
            let fetched = try context.fetch(FetchDescriptor<Sample>(predicate: predicate(which, text)))
            #expect(keys(fetched) == keys(expected), "seed \(seed), predicate \(which), '\(text)'")

            // The cached translation equals a first translation of the same predicate.
            let typed = predicate(which, text)
            let entity = try #require(TestModels.samples.entity(named: "Sample"))
            let cached = cache.translate(typed.expression, entity: entity)
            let fresh = PredicateTemplateCache().translate(typed.expression, entity: entity)
            #expect(String(describing: cached.map(\.0)) == String(describing: fresh.map(\.0)), "seed \(seed)")
            #expect(cached?.1 == fresh?.1)
        }
        // Three sites, one expression type for the first two: two types, three templates (one per site) at most.
        #expect(cache.count <= 2)
        #expect(cache.templateCount <= 3)
    }

    @Test("threads translating one shape with their own values share the cache and each get their own rows")
    func concurrentTranslations() throws {
        let seed = TestSeed.make()
        var generator = SeededGenerator(seed: seed)
        let (container, context) = try makeSamples(&generator)
        let expected = Dictionary(
            grouping: try context.fetch(FetchDescriptor<Sample>()).map { ($0.int64, $0.objectID.key) }, by: \.0
        ).mapValues { $0.map(\.1).sorted() }
        let cache = PredicateTemplateCache()
        let entity = try #require(TestModels.samples.entity(named: "Sample"))
        let failures = LockedValue<[String]>([])
        onThreads(4) { thread in
            let reader = container.newBackgroundContext()
            for round in 0..<50 {
                let number = Int64((thread * 7 + round) % 22)
                let predicate = #Predicate<Sample> { $0.int64 == number }
                guard let (node, isComplete) = cache.translate(predicate.expression, entity: entity), isComplete,
                    case .compare(_, .equal, .int64(number)) = node
                else {
                    failures.withLock { $0.append("thread \(thread): \(number) translated wrongly") }
                    continue
                }
                let keys = ((try? reader.fetch(FetchDescriptor<Sample>(predicate: predicate))) ?? []).map(
                    \.objectID.key)
                if keys.sorted() != expected[number, default: []] {
                    failures.withLock { $0.append("thread \(thread): \(number) fetched \(keys.count)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "seed \(seed): \(failures.withLock { $0.prefix(5) })")
        #expect(cache.count == 1)
        #expect(cache.templateCount == 1, "each thread's calls of the one site find the template made first")
    }
}
