import Dispatch
import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A stored uniqueness index found damaged is rebuilt from the entity's checkpoint chunks outside the store's lock
/// (``StoreState/readStoredUniqueLookups(_:of:)``): readers of the store go on while it rebuilds.
@Suite("A damaged stored index is rebuilt beside readers")
struct StoredIndexRebuildTests {
    typealias Fixture = StoredCheckpointIndexTests

    /// What a reader on another thread managed while the rebuild was held at its first read of an entity chunk.
    final class Observation: Sendable {
        let heldRebuild = LockedValue(false)
        let readerFinished = LockedValue(false)
    }

    @Test func readersGoOnWhileTheIndexIsRebuilt() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try Fixture.compactedStore(at: path, count: 9_000)
        // The directory is read first: a scan stops at the damage.
        let listed = try #require(try CheckpointChunkLayoutTests.directory(of: path))
        let entityChunkOffsets = Set(listed.entities.flatMap { $0.chunks.map(\.byteOffset) })
        _ = try StoredIndexDamageTests.damageFirstUniqueChunk(of: path)

        let faults = FaultInjector()
        var configuration = ModelContainer.Configuration()
        configuration.faultInjector = faults
        let container = try ModelContainer(path: path, model: Fixture.model, configuration: configuration)
        defer { try? container.close() }
        let store = container.store
        let observation = Observation()
        faults.onRead { _, byteOffset in
            // The rebuild's first read of an entity chunk: a reader on another thread takes the store's lock now.
            guard entityChunkOffsets.contains(byteOffset),
                observation.heldRebuild.withLock({ held in
                    defer { held = true }
                    return !held
                })
            else { return }
            let done = DispatchSemaphore(value: 0)
            let reader = Thread {
                _ = store.rowCount(of: [Fixture.itemEntity])
                done.signal()
            }
            reader.start()
            // Bounded, so that the test fails instead of hanging when the rebuild holds the lock (it did before).
            let finished = done.wait(timeout: .now() + 60) == .success
            observation.readerFinished.withLock { $0 = finished }
        }

        let context = container.newBackgroundContext()
        let found = try Fixture.fetch(identity: Fixture.identity(5), in: context)
        #expect(found.map(\.rank) == [0])
        #expect(observation.heldRebuild.withLock { $0 })
        #expect(observation.readerFinished.withLock { $0 })
        let index = try #require(Fixture.state(of: container).storedUniqueIndexes.first)
        #expect(index.replacement.damage != nil)
        #expect(index.replacement.reportCount == 1)
    }
}
