import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A compaction verifies its new file by re-reading every frame's checksums and the checkpoint's structure, not by
/// replaying it (`Docs/FileFormat-Checkpoints.md` §8): a write that reaches the disk wrong is still caught before the
/// new file replaces the log, and the store keeps its old file and its state.
@Suite("Compaction verification")
struct CompactionVerificationTests {
    /// A store of `count` courses with titles long enough that the checkpoint's entity chunks hold most of its bytes.
    static func makeStore(at path: String, count: Int, faults: FaultInjector) throws -> ModelContainer {
        var configuration = ModelContainer.Configuration(durability: .full)
        configuration.faultInjector = faults
        let container = try ModelContainer(path: path, model: TestModels.school, configuration: configuration)
        let context = container.newBackgroundContext()
        for code in 0..<count {
            let course = Course()
            context.insert(course)
            course.code = "C\(code)-" + String(repeating: "course title \(code) ", count: 4)
        }
        try context.save()
        return container
    }

    /// The rewrite writes the new file's header, then its frames (one buffered write here), then the seal: a bit
    /// flipped in the frames (the middle of the write lands in an entity chunk's body) or in the seal.
    @Test(arguments: [2, 3])
    func aFlippedBitInTheNewFileFailsTheCompaction(call: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let faults = FaultInjector()
        let container = try Self.makeStore(at: path, count: 3000, faults: faults)
        let digest = try container.stateDigest()
        let oldBytes = try Data(contentsOf: URL(fileURLWithPath: path))

        faults.arm(.write, onCall: call, fault: .flipBit)
        let error = #expect(throws: EventGraphError.self) { try container.compact() }
        #expect(faults.firedFaults == [.write])
        #expect(error?.message.contains("does not verify") == true)
        // The old log stays in use, unchanged, and the store keeps saving.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == oldBytes)
        #expect(try container.stateDigest() == digest)
        let context = container.newBackgroundContext()
        let course = Course()
        context.insert(course)
        course.code = "after"
        try context.save()
        let after = try container.stateDigest()
        try container.close()

        let reopened = try ModelContainer(path: path, model: TestModels.school)
        #expect(try reopened.stateDigest() == after)
        try reopened.close()
    }

    /// Without a fault the same compaction succeeds, and its new file replays to the live state's digest (what the
    /// checksum re-read no longer recomputes itself).
    @Test func theCheckedFileReplaysToTheLiveDigest() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let container = try Self.makeStore(at: path, count: 3000, faults: FaultInjector())
        let digest = try container.stateDigest()
        let report = try container.compact()
        #expect(report.stateDigest == digest)
        try container.close()

        var graph = LogGraph(source: path)
        try LogReader(path: path).scan { try graph.apply($0) }
        #expect(graph.anomalies.isEmpty)
        #expect(graph.digest() == digest)
    }
}
