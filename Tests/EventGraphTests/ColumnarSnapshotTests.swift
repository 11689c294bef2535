import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// Rows for the tests: entity 0, values (number, title, score, author, tags).
private func row(key: UInt64, version: UInt64, number: Int64, title: String) -> Row {
    Row(
        entityIndex: 0, key: key, version: version,
        values: [
            .attribute(.int64(number)), .attribute(.string(title)), .attribute(.double(Double(number) / 2)),
            .toOne(ObjectReference(entityIndex: 1, key: key % 7)),
            .toMany((0..<key % 3).map { ObjectReference(entityIndex: 2, key: $0) }),
        ])
}

private func contents(_ table: EntityColumns) -> [UInt64: Row] {
    Dictionary(uniqueKeysWithValues: table.liveRows.map { ($0.key, $0) })
}

private func same(_ a: [UInt64: Row], _ b: [UInt64: Row]) -> Bool {
    a.count == b.count
        && a.allSatisfy { key, row in b[key].map { $0.version == row.version && $0.values == row.values } ?? false }
}

/// Whether two arrays share one buffer (neither was copied).
private func sameStorage<T>(_ a: [T], _ b: [T]) -> Bool {
    a.withUnsafeBufferPointer { mine in b.withUnsafeBufferPointer { mine.baseAddress == $0.baseAddress } }
}

@Suite("Columnar state: versions are values that later commits do not change")
struct ColumnarVersionTests {
    /// 10,000 objects: three chunks.
    private func filledTable() -> EntityColumns {
        var table = EntityColumns(entityIndex: 0)
        for key in 1...UInt64(10_000) { table.put(row(key: key, version: 1, number: Int64(key), title: "post \(key)")) }
        return table
    }

    @Test("a reader holding an old version keeps seeing it while many commits install")
    func readerKeepsItsVersion() {
        var table = filledTable()
        let reader = table
        let expected = contents(reader)
        var generator = SeededGenerator(seed: TestSeed.make())
        var live = Set(1...UInt64(10_000))
        var nextKey = UInt64(10_001)
        for version in UInt64(2)...1_000 {
            switch generator.next() % 3 {
            case 0:
                let key = live.randomElement(using: &generator)!
                table.put(row(key: key, version: version, number: -Int64(version), title: "changed ünïcode \(version)"))
            case 1:
                table.put(row(key: nextKey, version: version, number: Int64(nextKey), title: "new"))
                live.insert(nextKey)
                nextKey += 1
            default:
                let key = live.randomElement(using: &generator)!
                table.remove(key: key)
                live.remove(key)
            }
        }
        #expect(same(contents(reader), expected))
        #expect(reader.count == 10_000)
        #expect(Set(contents(table).keys) == live)
    }

    @Test("a commit copies only the chunk it touches; the others stay shared with the reader's version")
    func commitCopiesOnlyTouchedChunks() throws {
        var table = filledTable()
        let reader = table
        try #require(table.chunks.count == 3)
        table.put(row(key: 5_000, version: 2, number: 5_000, title: "changed"))
        #expect(!table.chunks[1].sharesStorage(with: reader.chunks[1]))
        #expect(table.chunks[0].sharesStorage(with: reader.chunks[0]))
        #expect(table.chunks[2].sharesStorage(with: reader.chunks[2]))
        // The untouched columns of the touched chunk stay shared too.
        #expect(sameStorage(table.chunks[1].columns[0].words, reader.chunks[1].columns[0].words))
        #expect(!sameStorage(table.chunks[1].columns[1].arena.bytes, reader.chunks[1].columns[1].arena.bytes))
        #expect(reader.row(forKey: 5_000)?.values[1] == .attribute(.string("post 5000")))
        #expect(table.row(forKey: 5_000)?.values[1] == .attribute(.string("changed")))
    }

    @Test("a store state copied by a reader keeps its rows while the applier installs changesets")
    func storeStateVersions() throws {
        var state = StoreState(model: TestModels.school)
        let entity = try #require(TestModels.school.entities.first { $0.name == "Course" })
        let values = entity.defaultValues
        for key in 1...UInt64(5_000) { state.put(Row(entityIndex: entity.index, key: key, version: 1, values: values)) }
        let reader = state
        for key in 1...UInt64(2_500) { state.removeRow(entityIndex: entity.index, key: key * 2) }
        #expect(reader.objectCount(ofEntity: entity.index) == 5_000)
        #expect(state.objectCount(ofEntity: entity.index) == 2_500)
        #expect(reader.row(entityIndex: entity.index, key: 2) != nil)
        #expect(state.row(entityIndex: entity.index, key: 2) == nil)
    }
}

@Suite("Columns keep every value exactly as the log has it")
struct ColumnRoundTripTests {
    static let values: [PropertyValue] = [
        .attribute(.null), .attribute(.int16(-7)), .attribute(.int32(.min)), .attribute(.int64(.max)),
        .attribute(.double(-0.0)), .attribute(.double(.nan)), .attribute(.float(.infinity)), .attribute(.bool(true)),
        .attribute(.date(1e9)), .attribute(.string("")), .attribute(.string("e\u{301}\r\n😀")),
        .attribute(.url("https://example.com/a")), .attribute(.decimal("1.10")), .attribute(.binary([0, 255, 1])),
        .attribute(.transformable([])), .attribute(.uuid(LogUUID(high: 1, low: 2))),
        .attribute(.blob(BlobReference(transactionID: 3, index: 1, byteCount: 1 << 20))),
        .toOne(nil), .toOne(ObjectReference(storeIndex: 2, entityIndex: 1, key: 9)),
        .toMany([]), .toMany([ObjectReference(entityIndex: 1, key: 4), ObjectReference(entityIndex: 1, key: 2)]),
    ]

    /// The bit patterns of the values, so that NaN and -0.0 compare exactly.
    private static func pattern(_ value: PropertyValue) -> String {
        switch value {
        case .attribute(.double(let d)): "double \(d.bitPattern)"
        case .attribute(.float(let f)): "float \(f.bitPattern)"
        default: "\(value)"
        }
    }

    @Test("a value written over each other kind reads back exactly", arguments: values)
    func overwrite(_ value: PropertyValue) {
        var table = EntityColumns(entityIndex: 0)
        for (key, previous) in Self.values.enumerated() {
            table.put(Row(entityIndex: 0, key: UInt64(key), version: 1, values: [previous, previous]))
            table.put(Row(entityIndex: 0, key: UInt64(key), version: 2, values: [value, previous]))
        }
        for (key, previous) in Self.values.enumerated() {
            let values = table.row(forKey: UInt64(key))!.values
            #expect(values.map(Self.pattern) == [Self.pattern(value), Self.pattern(previous)])
        }
    }

    @Test("a column's arena bytes read in place through a pointer are the slot's bytes, rewritten ones included")
    func arenaBytesReadInPlace() {
        var column = Column()
        let texts = ["", "short", String(repeating: "long text é ", count: 40), "😀"]
        for (slot, text) in texts.enumerated() { column.set(.attribute(.string(text)), at: slot * 2) }
        column.set(.attribute(.string("rewritten")), at: 2)
        let expected = ["", "rewritten", texts[2], texts[3]]
        withUnsafePointer(to: column) { pointer in
            for slot in 0..<(texts.count * 2 + 3) {
                let inPlace = Column.withArenaBytes(of: pointer, at: slot) { Array($0) }
                #expect(inPlace == column.arena.withBytes(at: slot) { Array($0) })
                #expect(inPlace == (slot % 2 == 0 && slot / 2 < expected.count ? Array(expected[slot / 2].utf8) : []))
            }
        }
    }

    @Test("rows of one entity with different numbers of properties (schemas in force) keep their own length")
    func differentLengths() {
        var table = EntityColumns(entityIndex: 0)
        table.put(Row(entityIndex: 0, key: 1, version: 1, values: [.attribute(.int64(1))]))
        table.put(Row(entityIndex: 0, key: 2, version: 1, values: Array(Self.values.prefix(5))))
        table.put(Row(entityIndex: 0, key: 2, version: 2, values: Array(Self.values.prefix(2))))
        #expect(table.row(forKey: 1)?.values.array == [.attribute(.int64(1))])
        #expect(table.row(forKey: 2)?.values.count == 2)
    }

    @Test("many deletions compact the chunks and keep commit order")
    func compactionKeepsOrder() {
        var table = EntityColumns(entityIndex: 0)
        for key in 1...UInt64(6_000) { table.put(row(key: key, version: 1, number: Int64(key), title: "t\(key)")) }
        for key in 1...UInt64(6_000) where key % 3 != 0 { table.remove(key: key) }
        #expect(table.liveRows.map(\.key) == (1...UInt64(2_000)).map { $0 * 3 })
        #expect(table.slotCount < 6_000)
        #expect(table.row(forKey: 5_997)?.values[1] == .attribute(.string("t5997")))
    }
}
