import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// Checkpoint entity chunks are decoded straight into columns (values from the payload's bytes, no `PropertyValue`
/// per value): the column chunk must be the one the records decoded first and appended build, and what cannot be
/// used is still refused.
@Suite("Entity chunks decode straight into columns")
struct ChunkDecodingTests {
    static let stores = [LogUUID(high: 1, low: 2), LogUUID(high: 3, low: 4)]

    /// A random value of every kind the columns keep, non-ASCII strings and references into other stores included.
    static func randomValue(_ random: inout SeededGenerator) -> PropertyValue {
        func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
        func reference() -> ObjectReference {
            ObjectReference(storeIndex: UInt32(below(3)), entityIndex: UInt32(below(4)), key: random.next() % 1000)
        }
        switch below(14) {
        case 0: return .attribute(.null)
        case 1: return .attribute(.int16(Int16(truncatingIfNeeded: random.next())))
        case 2: return .attribute(.int64(Int64(bitPattern: random.next())))
        case 3: return .attribute(.double(Double(below(1000)) / 7))
        case 4: return .attribute(.bool(below(2) == 0))
        case 5: return .attribute(.string(String(repeating: "ascii ", count: below(9))))
        case 6: return .attribute(.string(String(repeating: "é∑ 🙂", count: 1 + below(5))))
        case 7: return .attribute(.url("https://example.com/\(below(100))"))
        case 8: return .attribute(.binary((0..<below(40)).map { _ in UInt8(truncatingIfNeeded: random.next()) }))
        case 9: return .attribute(.uuid(LogUUID(high: random.next(), low: random.next())))
        case 10: return .attribute(.blob(BlobReference(transactionID: 3, index: UInt32(below(5)), byteCount: 99)))
        case 11: return .toOne(below(3) == 0 ? nil : reference())
        case 12: return .toMany((0..<below(70)).map { _ in reference() })
        default: return .attribute(.decimal("\(below(1000)).25"))
        }
    }

    /// The column chunk built the way it was before: records decoded, then each appended with the defaults filled in.
    static func columnsFromRecords(_ chunk: CheckpointChunk, defaults: [PropertyValue], storeMap: [UInt32])
        -> ColumnChunk
    {
        var columns = ColumnChunk()
        for record in chunk.records {
            var values = defaults
            for change in record.properties {
                values[Int(change.propertyIndex)] = StoreState.localize(change, storeMap).value
            }
            _ = columns.append(key: record.object.key, version: 7, values: values)
        }
        return columns
    }

    static func rows(of chunk: ColumnChunk) -> [String] {
        (0..<chunk.slotCount).map { slot in
            let row = chunk.row(at: slot, entityIndex: 0)
            return "\(row.key) v\(row.version) \(Array(row.values))"
        }
    }

    @Test("random chunks: the columns the payload decodes into equal those its records build", arguments: 1...8)
    func sameColumns(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let propertyCount = 1 + Int(random.next() % 12)
        let defaults = (0..<propertyCount).map { _ in Self.randomValue(&random) }
        let records = (0..<Int(random.next() % 300)).map { index in
            let changes = (0..<Int(random.next() % UInt64(propertyCount + 2))).map { _ in
                PropertyChange(
                    propertyIndex: UInt32(random.next() % UInt64(propertyCount)), value: Self.randomValue(&random))
            }
            return ObjectRecord(
                object: ObjectReference(entityIndex: 0, key: UInt64(index * 3 + 1)), properties: changes)
        }
        let chunk = CheckpointChunk(foreignStores: Self.stores, records: records)
        let payload = try chunk.encoded()
        #expect(try CheckpointChunk(decoding: payload) == chunk)

        // The state knows the chunk's stores under other indexes.
        let stateStores = [LogUUID(high: 9, low: 9), Self.stores[1], Self.stores[0]]
        var builder = ColumnChunkBuilder(defaults: defaults, version: 7, foreignStores: stateStores, entityName: "E")
        try CheckpointChunk.visit(payload, &builder)
        #expect(builder.storeProblem == nil && builder.propertyProblem == nil)
        let expected = Self.columnsFromRecords(chunk, defaults: defaults, storeMap: [3, 2])
        #expect(Self.rows(of: builder.chunk) == Self.rows(of: expected))
    }

    @Test("a record that sets a property the entity lacks, and a store the state does not list, are refused")
    func refusals() throws {
        let chunk = CheckpointChunk(
            foreignStores: [LogUUID(high: 5, low: 5)],
            records: [
                ObjectRecord(
                    object: ObjectReference(entityIndex: 0, key: 1),
                    properties: [PropertyChange(propertyIndex: 4, value: .attribute(.int64(1)))])
            ])
        var builder = ColumnChunkBuilder(
            defaults: [.attribute(.null), .attribute(.null)], version: 1, foreignStores: [], entityName: "Post")
        try CheckpointChunk.visit(try chunk.encoded(), &builder)
        #expect(builder.propertyProblem == "object 1 sets property #4, which Post lacks")
        #expect(builder.storeProblem?.contains("which the checkpoint's first chunk does not list") == true)
    }

    @Test("a string that is not UTF-8 is refused at its offset, by the records' decoding and the columns' alike")
    func invalidUTF8() throws {
        let chunk = CheckpointChunk(records: [
            ObjectRecord(
                object: ObjectReference(entityIndex: 0, key: 1),
                properties: [PropertyChange(propertyIndex: 0, value: .attribute(.string("abcdefghij")))])
        ])
        var payload = try chunk.encoded()
        let position = try #require(payload.firstIndex(of: UInt8(ascii: "e")))
        payload[position] = 0xFF
        let recordsError = #expect(throws: LogFormatError.self) { try CheckpointChunk(decoding: payload) }
        var builder = ColumnChunkBuilder(defaults: [.attribute(.null)], version: 1, foreignStores: [], entityName: "E")
        let columnsError = #expect(throws: LogFormatError.self) { try CheckpointChunk.visit(payload, &builder) }
        #expect(recordsError?.message.contains("is not valid UTF-8") == true, "\(String(describing: recordsError))")
        #expect(recordsError?.message == columnsError?.message)
        #expect(recordsError?.byteOffset == columnsError?.byteOffset)
    }
}
