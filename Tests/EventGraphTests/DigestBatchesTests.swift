import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// An entity's digest made on two threads (``DigestBatches``) must be the serial digest, word for word, whatever the
/// helper thread does: fast, slow, overtaken, overflowing its lists, or never started. Every digest recorded in a
/// checkpoint rests on it.
@Suite("Digest batches made by a helper thread")
struct DigestBatchesTests {
    static func serialDigest(of words: EntityDigestWords) -> UInt128 {
        var hasher = DigestHasher()
        #expect(words.combine(objects: 0..<words.objectCount, into: &hasher))
        return hasher.state
    }

    static func batchedDigest(
        of words: EntityDigestWords, _ parameters: DigestBatches.Parameters,
        stoppingWhen isCancelled: () -> Bool = { false }
    ) throws -> (digest: UInt128, statistics: DigestBatches.Statistics) {
        let batches = try #require(DigestBatches(words, parameters: parameters))
        var hasher = DigestHasher()
        batches.combine(into: &hasher, stoppingWhen: isCancelled)
        #expect(batches.helperHasEnded)
        let statistics = batches.statistics
        #expect(statistics.hashedFromHelper + statistics.madeByCaller == batches.batchCount)
        return (hasher.state, statistics)
    }

    static func parameters(_ change: (inout DigestBatches.Parameters) -> Void = { _ in }) -> DigestBatches.Parameters {
        var parameters = DigestBatches.Parameters()
        parameters.leastObjectCount = 1
        parameters.helperAllowed = true
        change(&parameters)
        return parameters
    }

    @Test func batchedDigestIsTheSerialOneWhateverTheHelperDoes() throws {
        let (state, model) = try DigestFromColumnsTests.school(courses: 9_000)
        for entityIndex in model.entities.indices {
            let words = EntityDigestWords(state: state, entityIndex: entityIndex, model: model)
            guard words.objectCount > 0 else { continue }
            let serial = Self.serialDigest(of: words)
            let variants: [(String, DigestBatches.Parameters)] = [
                ("standard", Self.parameters()),
                (
                    "lead 1, one held list",
                    Self.parameters {
                        $0.lead = 1
                        $0.maximumHeldCount = 1
                    }
                ),
                ("batches of one", Self.parameters { $0.largestBatch = 1 }),
                (
                    "slowed every third batch",
                    Self.parameters { $0.beforeHelperBatch = { if $0 % 3 == 0 { usleep(500) } } }
                ),
                ("lists that overflow", Self.parameters { $0.wordCapacity = 40 }),
            ]
            for (name, parameters) in variants {
                let (digest, statistics) = try Self.batchedDigest(of: words, parameters)
                #expect(digest == serial, "\(model.entities[entityIndex].name), helper \(name): \(statistics)")
            }
        }
        #expect(state.digest(model: model, helperThread: true) == state.digest(model: model))
        #expect(state.digest(model: model) == DigestFromColumnsTests.rowDigest(of: state, model: model))
    }

    @Test func aSlowCallerHashesTheHelpersLists() throws {
        let (state, model) = try DigestFromColumnsTests.school(courses: 9_000)
        let course = try #require(model.entities.firstIndex { $0.name == "Course" })
        let words = EntityDigestWords(state: state, entityIndex: course, model: model)
        // The caller sleeps before each batch (it asks `isCancelled` then): the helper makes the batches ahead.
        let (digest, statistics) = try Self.batchedDigest(of: words, Self.parameters()) {
            usleep(2_000)
            return false
        }
        #expect(digest == Self.serialDigest(of: words))
        #expect(statistics.hashedFromHelper > 0, "\(statistics)")
    }

    @Test func aHelperSlowerThanTheCallerIsOvertakenAndChangesNothing() throws {
        let (state, model) = try DigestFromColumnsTests.school(courses: 9_000)
        let course = try #require(model.entities.firstIndex { $0.name == "Course" })
        let words = EntityDigestWords(state: state, entityIndex: course, model: model)
        let (digest, statistics) = try Self.batchedDigest(
            of: words, Self.parameters { $0.beforeHelperBatch = { _ in usleep(20_000) } })
        #expect(digest == Self.serialDigest(of: words))
        #expect(statistics.madeByCaller > 0, "\(statistics)")
    }

    @Test func listsThatOverflowAreDroppedAndTheCallerMakesTheirBatches() throws {
        let (state, model) = try DigestFromColumnsTests.school(courses: 9_000)
        let course = try #require(model.entities.firstIndex { $0.name == "Course" })
        let words = EntityDigestWords(state: state, entityIndex: course, model: model)
        let (digest, statistics) = try Self.batchedDigest(of: words, Self.parameters { $0.wordCapacity = 8 }) {
            usleep(200)
            return false
        }
        #expect(digest == Self.serialDigest(of: words))
        #expect(statistics.hashedFromHelper == 0, "\(statistics)")
        #expect(statistics.dropped > 0, "\(statistics)")
    }

    @Test(arguments: [0, 1, 3, 20])
    func aCancelledDigestEndsItsHelper(after asks: Int) throws {
        let (state, model) = try DigestFromColumnsTests.school(courses: 9_000)
        let course = try #require(model.entities.firstIndex { $0.name == "Course" })
        let words = EntityDigestWords(state: state, entityIndex: course, model: model)
        let count = LockedValue(0)
        let batches = try #require(DigestBatches(words, parameters: Self.parameters()))
        var hasher = DigestHasher()
        batches.combine(into: &hasher) {
            count.withLock { count in
                count += 1
                return count > asks
            }
        }
        #expect(batches.helperHasEnded)
        #expect(count.withLock { $0 } == asks + 1)
        #expect(state.digest(model: model, helperThread: true) { true } == nil)
    }

    @Test func noHelperForFewObjectsOrOneCore() throws {
        let (state, model) = try DigestFromColumnsTests.school(courses: 5_000)
        let course = try #require(model.entities.firstIndex { $0.name == "Course" })
        let words = EntityDigestWords(state: state, entityIndex: course, model: model)
        #expect(DigestBatches(words, parameters: Self.parameters { $0.helperAllowed = false }) == nil)
        #expect(DigestBatches(words, parameters: Self.parameters { $0.leastObjectCount = 5_001 }) == nil)
        let batches = try #require(DigestBatches(words, parameters: Self.parameters()))
        #expect(batches.batchSize == 4_900 / 16)
        #expect(batches.objects(ofBatch: batches.batchCount - 1).upperBound == words.objectCount)
        var hasher = DigestHasher()
        batches.combine(into: &hasher) { false }
        #expect(hasher.state == Self.serialDigest(of: words))
    }

    @Test func aWordListKeepsNoWordPastItsCapacity() {
        let memory = UnsafeMutablePointer<UInt64>.allocate(capacity: 4)
        defer { memory.deallocate() }
        var list = DigestWordList(base: memory, capacity: 3)
        list.combine(integer: 1)
        list.combine(integer: 2)
        #expect(list.wantsMore && list.isComplete)
        list.combine(integer: 3)
        #expect(!list.wantsMore && list.isComplete)
        memory[3] = 99
        list.combine(integer: 4)
        #expect(!list.isComplete && list.count == 4 && memory[3] == 99)
        #expect(Array(list.words) == [1, 2, 3])
    }
}
