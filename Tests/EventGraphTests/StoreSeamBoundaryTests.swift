import Foundation
import Testing

/// Contexts, objects and fetching reach committed data only through the ``ObjectStore`` protocol, so that a parent
/// context or a coordinator of several stores can stand where a store stands today.
@Suite("Contexts, objects and fetching name no concrete store")
struct StoreSeamBoundaryTests {
    /// The types beneath the seam.
    static let concreteTypes = [
        "Store", "StoreState", "CommitQueue", "CommitLock", "LogBackend", "FileBackend", "MemoryBackend",
    ]

    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/EventGraph")

    @Test(arguments: ["Objects", "Context", "Fetching"])
    func noLineOfCodeNamesAConcreteStoreType(folder: String) throws {
        let directory = Self.sources.appendingPathComponent(folder)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".swift")
        }
        try #require(!files.isEmpty, "no sources in \(directory.path)")
        // A concrete type by name, or a member of a `store` (the concrete store a context held before the seam).
        let pattern = try Regex("\\b(\(Self.concreteTypes.joined(separator: "|")))\\b|\\bstore\\.")
            .wordBoundaryKind(.simple)  // the default, Unicode's, sees no boundary in `context.store.row`
        var offending: [String] = []
        for file in files.sorted() {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                // Comments may speak of the store; code may not name its type.
                let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                if code.contains(pattern) { offending.append("\(folder)/\(file):\(number + 1): \(line)") }
            }
        }
        #expect(offending.isEmpty, "\(offending.joined(separator: "\n"))")
    }
}
