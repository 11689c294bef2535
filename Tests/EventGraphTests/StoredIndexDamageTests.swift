import Foundation
import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// A damaged chunk of a stored uniqueness index (format 1.4) is found once: the index's entries are rebuilt in
/// memory from the entity's checkpoint chunks, every later lookup (in any version of the state) answers from them,
/// and the damage is reported once, naming the file, the index, the entity and the chunk's byte offset.
@Suite("A damaged stored index is replaced once")
struct StoredIndexDamageTests {
    typealias Fixture = StoredCheckpointIndexTests

    /// Flips one bit inside the body of the first chunk of the uniqueness index; returns that chunk's byte offset.
    static func damageFirstUniqueChunk(of path: String) throws -> UInt64 {
        let listed = try #require(try CheckpointChunkLayoutTests.directory(of: path))
        let index = try #require(listed.indexes.first { $0.kind == .unique })
        try #require(index.chunks.count > 1)
        let offset = index.chunks[0].byteOffset
        let file = try #require(FileHandle(forUpdatingAtPath: path))
        file.seek(toFileOffset: offset + 64)
        let byte = file.readData(ofLength: 1)
        file.seek(toFileOffset: offset + 64)
        file.write(Data([byte[0] ^ 0x10]))
        try file.close()
        return offset
    }

    @Test func lookupsStayRightTheDamageIsReportedOnceAndTheReplacementIsShared() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try Fixture.compactedStore(at: path, count: 9_000)
        let offset = try Self.damageFirstUniqueChunk(of: path)

        let container = try ModelContainer(path: path, model: Fixture.model)
        defer { try? container.close() }
        let index = try #require(Fixture.state(of: container).storedUniqueIndexes.first)
        #expect(index.replacement.damage == nil)

        let context = container.newBackgroundContext()
        // In the damaged chunk, in an intact one, and absent: each found exactly as stored.
        for position in [5, 6, 4_000, 4_095, 4_096, 8_999] {
            let found = try Fixture.fetch(identity: Fixture.identity(position), in: context)
            #expect(found.map(\.rank) == [Int64(position / 100)], "item \(position)")
        }
        #expect(try Fixture.fetch(identity: "absent", in: context).isEmpty)
        let damage = try #require(index.replacement.damage)
        #expect(damage.message.contains(path), "\(damage.message)")
        #expect(damage.message.contains("byte offset \(offset)"), "\(damage.message)")
        #expect(damage.message.contains("uniqueness index (handle) of entity IndexedItem"), "\(damage.message)")

        // A taken identity is refused, a free one accepted; a renamed object is found by its new identity only.
        let duplicate = IndexedItem()
        context.insert(duplicate)
        duplicate.handle = Fixture.identity(7)
        #expect(throws: EventGraphError.self) { try context.save() }
        context.rollback()
        let renamed = try #require(try Fixture.fetch(identity: Fixture.identity(8), in: context).first)
        renamed.handle = "renamed"
        let fresh = IndexedItem()
        context.insert(fresh)
        fresh.handle = Fixture.identity(8)
        fresh.rank = 999
        try context.save()

        // A later version shares the replacement: nothing is read or reported again.
        let later = container.newBackgroundContext()
        #expect(try Fixture.fetch(identity: Fixture.identity(8), in: later).map(\.rank) == [999])
        #expect(try Fixture.fetch(identity: "renamed", in: later).map(\.rank) == [0])
        #expect(try Fixture.fetch(identity: Fixture.identity(9), in: later).map(\.rank) == [0])
        let laterIndex = try #require(Fixture.state(of: container).storedUniqueIndexes.first)
        #expect(laterIndex.replacement === index.replacement)
        #expect(index.replacement.reportCount == 1)
        #expect(try Fixture.fetch(rank: 3, in: later) == Set((300..<400).map(Fixture.identity)))
    }
}
