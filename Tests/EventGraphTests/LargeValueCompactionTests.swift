import EventGraph
import Foundation
import Testing

/// An object with values larger than a frame (16 MiB), kept inline in its row (no external storage).
final class Archive: ManagedObject {
    @Attribute var title: String = ""
    @Attribute var text: String = ""
    @Attribute var scan: Data = Data()
}

/// A checkpoint holds every object the API accepts (issue 9 item 13): a store whose object is larger than a frame
/// compacts, and reopens with the same values and digest.
@Suite("Compaction of objects larger than a frame")
struct LargeValueCompactionTests {
    enum Value: String, CaseIterable, CustomTestStringConvertible {
        case string, binary
        var testDescription: String { "a ~20 MiB \(rawValue)" }
    }

    /// 20 MiB of text, or of bytes with every value (not valid UTF-8, so only a binary can hold them).
    static let text = String(repeating: "0123456789abcdef", count: 20 << 16)
    static let bytes = Data((0..<(20 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 12) })

    @Test("compacts and reopens with equal values and digest", arguments: Value.allCases)
    func compactsAndReopens(_ value: Value) throws {
        let directory = TemporaryDirectory()
        let model = try ObjectModel(types: [Archive.self])
        let digest: StateDigest
        do {
            let container = try ModelContainer(path: directory.file(), model: model)
            let context = container.newBackgroundContext()
            let small = Archive()
            context.insert(small)
            small.title = "small"
            let large = Archive()
            context.insert(large)
            large.title = "large"
            switch value {
            case .string: large.text = Self.text
            case .binary: large.scan = Self.bytes
            }
            try context.save()
            digest = try container.stateDigest()
            let report = try container.compact()
            #expect(report.objectCount == 2)
            #expect(report.stateDigest == digest)
            try container.close()
        }
        let container = try ModelContainer(path: directory.file(), model: model)
        #expect(try container.stateDigest() == digest)
        let context = container.newBackgroundContext()
        let archives = try context.fetch(FetchDescriptor<Archive>())
        let large = try #require(archives.first { $0.title == "large" })
        switch value {
        case .string: #expect(large.text == Self.text)
        case .binary: #expect(large.scan == Self.bytes)
        }
        #expect(archives.contains { $0.title == "small" && $0.text.isEmpty && $0.scan.isEmpty })
        // The store goes on: another save and another compaction of the compacted file.
        large.title = "still large"
        try context.save()
        try container.compact()
        try container.close()
    }
}
