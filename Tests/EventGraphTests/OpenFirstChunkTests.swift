import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// Open reads a compacted checkpoint's first entity chunk for its table of foreign stores only: the frame is read and
/// verified and the table decoded, its records are left to the chunk's first touch (LogFormat's
/// `CheckpointChunkForeignStoresTests`), so damage to its frame is refused at open with the error that names the
/// chunk, as when its records were built.
@Suite("Open reads the checkpoint's first chunk for its foreign stores")
struct OpenFirstChunkTests {
    @Test func anUndamagedFirstChunkOpensWithTheSameStateAndDigest() throws {
        let directory = TemporaryDirectory()
        let (digest, count) = try CheckpointChunkLayoutTests.compactedStore(at: directory.file(), studentCount: 5_000)
        let container = try ModelContainer(path: directory.file(), model: TestModels.school)
        defer { try? container.close() }
        let state = container.store.state.withLock { $0 }
        #expect(state.foreignStores.isEmpty)
        #expect(state.objectCount == count + 2, "the students left and the two courses")
        #expect(try container.stateDigest() == digest)
    }

    @Test func aDamagedFirstChunkIsRefusedAtOpenNamingIt() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try CheckpointChunkLayoutTests.compactedStore(at: path, studentCount: 5_000)
        let listed = try #require(try CheckpointChunkLayoutTests.directory(of: path))
        let first = try #require(listed.entities.first)
        let target = first.chunks[0]
        try CheckpointChunkLayoutTests.flipBit(0x04, inBodyOf: target, at: 40, path: path)

        let name = TestModels.school.entities[Int(first.entityIndex)].name
        let error = #expect(throws: EventGraphError.self) {
            try ModelContainer(path: path, model: TestModels.school)
        }
        let message = error?.message ?? ""
        #expect(message.contains("chunk 0 of entity \(name)"), "\(message)")
        #expect(message.contains("byte offset \(target.byteOffset)"), "\(message)")
    }
}
