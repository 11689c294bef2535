import Foundation
import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// Text defaults whose comparison with a stored value is by canonical equivalence, not by bytes.
final class CheckpointDefaults: ManagedObject {
    @Attribute var composed: String = "caf\u{E9}"
    @Attribute var kelvin: String = "\u{212A}"
    @Attribute var url: URL = URL(string: "https://example.com/\u{FC}")!
    @Attribute var blob: Data = Data([1, 2, 3])
    @Attribute var number: Double = 0
    @Attribute(.transient) var scratch: String = ""
}

/// A compaction encodes entity chunks straight from the columns (`ColumnChunk.checkpointPayload`); the bytes must be
/// those the record encoder writes for the same state (`StoreState.checkpointEntityChunks` then
/// `CheckpointChunk.encoded()`), or the format would depend on the writer and golden files would stop meaning it.
@Suite("Checkpoint entity chunks encoded from the columns")
struct CheckpointFromColumnsTests {
    static let models: [ObjectModel] = [
        TestModels.samples, TestModels.school,
        try! ObjectModel(name: "Defaults", version: "1", types: [CheckpointDefaults.self]),
    ]

    /// Compares the two encoders on one state: the same begin, the same ordinary chunks, and per entity chunk the
    /// same payload bytes and directory facts.
    static func expectSameCheckpoint(of state: StoreState, model: ObjectModel) throws {
        let reference = state.checkpointEntityChunks(model: model, nextKey: 77)
        let plan = state.checkpointEntityChunkPlan(model: model, nextKey: 77)
        #expect(plan.begin == reference.begin)
        #expect(plan.chunks.count == reference.chunks.count)
        #expect(plan.chunks == reference.chunks, "the ordinary chunks differ")
        try #require(plan.entityChunks.count == reference.entityChunks.count)
        for (index, chunk) in reference.entityChunks.enumerated() {
            let expected = try EntityChunkPayload(chunk)
            let payload = try plan.entityChunkPayload(index, model: model)
            #expect(payload.entityIndex == expected.entityIndex, "entity chunk \(index)")
            #expect(payload.objectCount == expected.objectCount, "entity chunk \(index)")
            #expect(payload.minKey == expected.minKey && payload.maxKey == expected.maxKey, "entity chunk \(index)")
            let difference = payload.bytes.indices.first { index in
                index >= expected.bytes.count || payload.bytes[index] != expected.bytes[index]
            }
            let same = payload.bytes == expected.bytes
            #expect(
                same,
                "entity chunk \(index): \(payload.bytes.count) bytes against \(expected.bytes.count), first difference at byte \(difference.map(String.init) ?? "none")"
            )
        }
    }

    /// A random value of any kind (a column keeps whatever kind arrives), the property's default one time in four.
    static func randomValue(
        default defaultValue: PropertyValue, foreignStoreCount: Int, entityCount: Int,
        using random: inout SeededGenerator
    ) -> PropertyValue {
        func reference() -> ObjectReference {
            ObjectReference(
                storeIndex: UInt32.random(in: 0...UInt32(foreignStoreCount), using: &random),
                entityIndex: UInt32.random(in: 0..<UInt32(entityCount), using: &random),
                key: UInt64.random(in: 1...300, using: &random))
        }
        let texts = [
            "", "a", "exactly8", "plain ASCII text that runs longer than one word", "caf\u{E9}", "cafe\u{301}",
            "\u{212A}", "K", "日本語", "🙂", "https://example.com/\u{FC}", "https://example.com/u\u{308}",
        ]
        switch Int.random(in: 0..<24, using: &random) {
        case 0..<6: return defaultValue
        case 6: return .attribute(.null)
        case 7: return .attribute(.int16(Int16.random(in: .min ... .max, using: &random)))
        case 8: return .attribute(.int32(Int32.random(in: .min ... .max, using: &random)))
        case 9: return .attribute(.int64(Int64.random(in: -1000...1000, using: &random) << 20))
        case 10: return .attribute(.double([0, -0.0, .nan, .infinity, 1.5, -1e300].randomElement(using: &random)!))
        case 11: return .attribute(.float([0, -0.0, .nan, 2.25].randomElement(using: &random)!))
        case 12: return .attribute(.bool(Bool.random(using: &random)))
        case 13: return .attribute(.string(texts.randomElement(using: &random)!))
        case 14: return .attribute(.date(Double(Int.random(in: -5...5, using: &random)) * 1e8))
        case 15: return .attribute(.uuid(LogUUID(high: random.next(), low: random.next())))
        case 16: return .attribute(.url(texts.randomElement(using: &random)!))
        case 17: return .attribute(.decimal(["0", "-1.25", "3.1415"].randomElement(using: &random)!))
        case 18:
            let count = [0, 3, 64, 300].randomElement(using: &random)!
            return .attribute(.binary((0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }))
        case 19: return .attribute(.transformable([UInt8](repeating: 7, count: Int.random(in: 0..<9, using: &random))))
        case 20:
            return .attribute(
                .blob(
                    BlobReference(
                        transactionID: UInt64.random(in: 1...9, using: &random),
                        index: UInt32.random(in: 0...3, using: &random), byteCount: 100)))
        case 21: return .toOne(Bool.random(using: &random) ? nil : reference())
        default:
            // Short lists in the shared span, lists of 64 and more in arrays of their own.
            let count = [0, 1, 5, 63, 64, 130].randomElement(using: &random)!
            return .toMany((0..<count).map { _ in reference() })
        }
    }

    /// A state of several chunks per entity: inserts, replacements (garbage in arenas and spans) and deletions
    /// (emptied slots), with references into foreign stores.
    static func randomState(model: ObjectModel, seed: UInt64, hasForeignStores: Bool = true) -> StoreState {
        var random = SeededGenerator(seed: seed)
        var state = StoreState(model: model, isIndexed: false)
        let foreignStoreCount = Int.random(in: 0...2, using: &random) * (hasForeignStores ? 1 : 0)
        for _ in 0..<foreignStoreCount { _ = state.storeIndex(of: LogUUID(high: random.next(), low: random.next())) }
        var key: UInt64 = 1
        for entityIndex in model.entities.indices {
            let entity = model.entities[entityIndex]
            let count = entityIndex == 0 ? 5000 : Int.random(in: 0..<700, using: &random)
            var keys: [UInt64] = []
            for _ in 0..<count {
                let values = entity.defaultValues.map {
                    randomValue(
                        default: $0, foreignStoreCount: foreignStoreCount, entityCount: model.entities.count,
                        using: &random)
                }
                state.put(Row(entityIndex: entityIndex, key: key, version: key, values: values))
                keys.append(key)
                key += 1
            }
            for _ in 0..<count / 4 {
                guard let changed = keys.randomElement(using: &random) else { break }
                if Bool.random(using: &random) {
                    state.removeRow(entityIndex: entityIndex, key: changed)
                } else {
                    let values = entity.defaultValues.map {
                        randomValue(
                            default: $0, foreignStoreCount: foreignStoreCount, entityCount: model.entities.count,
                            using: &random)
                    }
                    state.put(Row(entityIndex: entityIndex, key: changed, version: key, values: values))
                }
            }
        }
        return state
    }

    @Test(arguments: models.indices)
    func randomStatesEncodeAsTheirRecords(modelIndex: Int) throws {
        let seed = TestSeed.make()
        for round in 0..<3 {
            let state = Self.randomState(model: Self.models[modelIndex], seed: seed &+ UInt64(round))
            try Self.expectSameCheckpoint(of: state, model: Self.models[modelIndex])
        }
    }

    /// Text columns whose arenas hold only ASCII (the usual ones: the encoder then trusts the arena's flag and scans
    /// no value): values equal to ASCII defaults, and ASCII values canonically equivalent to a non-ASCII default
    /// ("K" and the Kelvin sign), are left out exactly as the record encoder leaves them out.
    @Test(arguments: models.indices)
    func asciiArenasEncodeAsTheirRecords(modelIndex: Int) throws {
        let model = Self.models[modelIndex]
        var random = SeededGenerator(seed: TestSeed.make())
        var state = StoreState(model: model, isIndexed: false)
        let texts = ["", "a", "K", "exactly8", "plain ASCII text that runs longer than one word", "sample"]
        var key: UInt64 = 1
        for entityIndex in model.entities.indices {
            let entity = model.entities[entityIndex]
            for _ in 0..<300 {
                // Every text is ASCII, defaults included (a non-ASCII default stored would make its arena not).
                let values = entity.defaultValues.map { value -> PropertyValue in
                    switch value {
                    case .attribute(.string): return .attribute(.string(texts.randomElement(using: &random)!))
                    case .attribute(.url): return .attribute(.url("https://example.com/\(key)"))
                    case .attribute(.decimal): return .attribute(.decimal("\(key).5"))
                    default: return value
                    }
                }
                state.put(Row(entityIndex: entityIndex, key: key, version: key, values: values))
                key += 1
            }
        }
        var textColumnCount = 0
        for table in state.tables where table.chunkCount > 0 {
            let chunk = table.chunk(at: 0)
            for column in chunk.columns where (0..<chunk.slotCount).contains(where: { column.tag(at: $0) == .string }) {
                #expect(column.arena.isASCII)
                textColumnCount += 1
            }
        }
        #expect(textColumnCount > 0)
        try Self.expectSameCheckpoint(of: state, model: model)
    }

    /// An attribute read from a chunk by property (in place, no column copied) is the column's value of the slot:
    /// `.null` for a relationship, an absent value and a property past the chunk's columns.
    @Test(arguments: models.indices)
    func attributeValuesReadInPlaceAreTheColumnsValues(modelIndex: Int) throws {
        let model = Self.models[modelIndex]
        let state = Self.randomState(model: model, seed: TestSeed.make())
        for table in state.tables {
            table.forEachLiveSlot { chunk, position, _ in
                for property in 0...chunk.columns.count {
                    var expected = AttributeValue.null
                    if property < chunk.columns.count,
                        case .attribute(let value) = chunk.columns[property].value(at: position)
                    {
                        expected = value
                    }
                    // Described, not compared: NaN is a stored value equal to itself here.
                    let value = chunk.attributeValue(at: position, property: property)
                    #expect(String(reflecting: value) == String(reflecting: expected))
                }
            }
        }
    }

    /// The digest read from the columns (by their addresses, no column copied) is the digest of the decoded rows on
    /// the same random states: every value kind, lists in and out of key order. (Without foreign stores: the rows'
    /// reference digest orders a list by entity name and key only.)
    @Test(arguments: models.indices)
    func randomStatesDigestAsTheirRows(modelIndex: Int) throws {
        let seed = TestSeed.make()
        let model = Self.models[modelIndex]
        let state = Self.randomState(model: model, seed: seed, hasForeignStores: false)
        #expect(state.digest(model: model) == DigestFromColumnsTests.rowDigest(of: state, model: model))
    }

    /// The digest a compaction computes on its own thread beside the rewrite (``BackgroundDigest``) is the digest
    /// computed alone, on the same random states; one cancelled (a close) throws "closed" instead of a digest.
    @Test(arguments: models.indices)
    func theDigestBesideTheRewriteIsTheDigestComputedAlone(modelIndex: Int) throws {
        let seed = TestSeed.make()
        let model = Self.models[modelIndex]
        let state = Self.randomState(model: model, seed: seed)
        let beside = BackgroundDigest(of: state, model: model, cancellation: RewriteCancellation())
        #expect(try beside.value() == state.digest(model: model))

        let closing = RewriteCancellation()
        closing.cancel()
        let cancelled = BackgroundDigest(of: state, model: model, cancellation: closing)
        #expect(throws: EventGraphError.self) { try cancelled.value() }
        #expect(state.digest(model: model, stoppingWhen: { true }) == nil)
    }

    /// An entity whose chunk holds a value too large for a frame is written as ordinary chunks by both; one whose
    /// arena is large only because of transient values (not written) is still entity chunks.
    @Test func entitiesNearTheFrameLimitAreSplitAsTheRecordsSplitThem() throws {
        let model = Self.models[2]
        let entity = model.entities[0]
        let scratch = try #require(entity.properties.firstIndex { $0.name == "scratch" })
        let blob = try #require(entity.properties.firstIndex { $0.name == "blob" })
        var state = StoreState(model: model, isIndexed: false)
        let large = String(repeating: "x", count: 9 << 20)
        for key in UInt64(1)...3 {
            var values = entity.defaultValues
            values[scratch] = .attribute(.string(large))
            state.put(Row(entityIndex: 0, key: key, version: 1, values: values))
        }
        try Self.expectSameCheckpoint(of: state, model: model)
        #expect(state.checkpointEntityChunkPlan(model: model, nextKey: 4).entityChunks.count == 1)

        var values = entity.defaultValues
        values[blob] = .attribute(.binary([UInt8](repeating: 1, count: 17 << 20)))
        state.put(Row(entityIndex: 0, key: 4, version: 2, values: values))
        let plan = state.checkpointEntityChunkPlan(model: model, nextKey: 5)
        #expect(plan.entityChunks.isEmpty && !plan.chunks.isEmpty)
        try Self.expectSameCheckpoint(of: state, model: model)
    }

    /// A compaction writes the file the record encoder wrote: the store reopens to the same digest.
    @Test func compactedStoreReopensToTheSameState() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.samples)
        let context = container.newBackgroundContext()
        for index in 0..<5000 {
            let sample = Sample()
            context.insert(sample)
            sample.int64 = Int64(index)
            sample.string = index % 3 == 0 ? "" : "sample \(index) \(index % 7 == 0 ? "é" : "e")"
            sample.double = index % 5 == 0 ? -0.0 : Double(index)
            sample.data = Data(repeating: UInt8(index % 256), count: index % 4 == 0 ? 0 : 70)
        }
        try context.save()
        let digest = try container.stateDigest()
        try container.compact()
        try container.close()
        let reopened = try ModelContainer(path: directory.file(), model: TestModels.samples)
        #expect(try reopened.stateDigest() == digest)
        try reopened.close()
    }
}
