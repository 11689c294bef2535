import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// Opening several stores cleans up references into another store whose targets were deleted while it was away
/// (``ModelContainer/referenceCleanup``): each reference into another mounted store is looked up there. When the
/// target's checkpoint chunk cannot be read, the open throws the chunk's error (naming the file, the entity, the
/// chunk and its byte offset) and writes nothing; once the chunk reads again, the same open cleans up. Before, the
/// lookup ended the process (`fatalError` in the non-throwing `StoreCoordinator.row(of:)`).
@Suite("Cleaning up references across stores over a checkpoint chunk that cannot be read")
struct ReferenceCleanupChunkFailureTests {
    static let files = ["private.eglog", "staff.eglog", "public.eglog"]

    /// The stores' bytes, file by file.
    static func contents(of directory: TemporaryDirectory) throws -> [Data] {
        try files.map { try Data(contentsOf: URL(fileURLWithPath: directory.file($0))) }
    }

    /// How many records other than seals (a close appends one) the stores' logs hold, file by file.
    static func recordsOtherThanSeals(in directory: TemporaryDirectory) throws -> [Int] {
        try files.map { file in
            var count = 0
            try LogReader(path: directory.file(file)).scan { record in
                if case .seal = record { return }
                count += 1
            }
            return count
        }
    }

    /// Expects the stores to hold what they held (`before`), with at most seals appended.
    static func expectUnchanged(_ directory: TemporaryDirectory, since before: [Data], _ records: [Int]) throws {
        let after = try contents(of: directory)
        for (old, new) in zip(before, after) { #expect(new.prefix(old.count) == old) }
        #expect(try recordsOtherThanSeals(in: directory) == records)
    }

    @Test func anUnreadableTargetChunkFailsTheOpenAndChangesNothing() throws {
        let directory = TemporaryDirectory()
        let model = SeveralStoresModels.campus
        // A lecture (public store) with a tutor (staff store), two pupils and a handout (private store); the private
        // store compacted, so that the handout is read from its checkpoint chunk.
        let ids = try UnmountedStoreTests.enrol(in: directory)
        let (lectureID, goneID) = (ids.lecture, ids.pupils[0])
        let container = try SeveralStoresModels.container(in: directory)
        _ = try CrossStoreCompactionTests.store(ObjectModel.defaultConfigurationName, of: container).compact()
        try container.close()

        // With the public store away, a pupil is deleted: the lecture keeps its reference, to be cleaned up.
        var stores = SeveralStoresModels.stores(in: directory)
        stores[2].mounting = .never
        let away = try ModelContainer(model: model, stores: stores)
        let awayContext = away.newBackgroundContext()
        awayContext.delete(try #require(awayContext.object(with: goneID)))
        try awayContext.save()
        try away.close()

        // The handout's chunk is damaged: the lecture refers to the handout, and the cleanup looks it up there.
        let path = directory.file("private.eglog")
        let handoutIndex = UInt32(try #require(model.entity(named: "Handout")).index)
        let listed = try #require(try CheckpointChunkLayoutTests.directory(of: path))
        let chunk = try #require(listed.entities.first { $0.entityIndex == handoutIndex }?.chunks.first)
        try CheckpointChunkLayoutTests.flipBit(0x10, inBodyOf: chunk, at: 4, path: path)
        let before = try Self.contents(of: directory)
        let records = try Self.recordsOtherThanSeals(in: directory)

        for _ in 0..<2 {
            let error = #expect(throws: EventGraphError.self) {
                try ModelContainer(model: model, stores: SeveralStoresModels.stores(in: directory)).close()
            }
            let message = error?.message ?? ""
            #expect(message.contains("chunk 0 of entity Handout"), "\(message)")
            #expect(message.contains("byte offset \(chunk.byteOffset)"), "\(message)")
            #expect(message.contains(path), "\(message)")
            // Nothing but the seal of each store's close was written.
            try Self.expectUnchanged(directory, since: before, records)
        }

        // Repaired, the same open cleans up the reference to the deleted pupil.
        try CheckpointChunkLayoutTests.flipBit(0x10, inBodyOf: chunk, at: 4, path: path)
        let repaired = try ModelContainer(model: model, stores: SeveralStoresModels.stores(in: directory))
        defer { try? repaired.close() }
        let cleaned = repaired.referenceCleanup.cleanedReferences
        #expect(cleaned.map(\.source) == [lectureID], "\(cleaned)")
        #expect(cleaned.map(\.target) == [goneID])
        let rereadContext = repaired.newBackgroundContext()
        let reread = try #require(rereadContext.object(with: lectureID) as? Lecture)
        #expect(reread.pupils.map(\.name) == ["Cy"])
    }
}
