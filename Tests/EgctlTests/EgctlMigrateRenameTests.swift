import EventGraph
import Foundation
import Testing

/// Version 1 of a shelf model, and version 2 with the entity and an attribute renamed.
private enum ShelvesV1 {
    final class Shelf: ManagedObject {
        override class var entityName: String { "Shelf" }
        @Attribute var label: String = ""
        @Attribute var width: Int32 = 0
    }

    static let model = try! ObjectModel(name: "Shelves", version: "1", types: [Shelf.self])
}

private enum ShelvesV2 {
    final class Bookcase: ManagedObject {
        override class var entityName: String { "Bookcase" }
        override class var originalEntityName: String? { "Shelf" }
        @Attribute(.originalName("label")) var tag: String = ""
        @Attribute var width: Int32 = 0
    }

    static let model = try! ObjectModel(name: "Shelves", version: "2", types: [Bookcase.self])
}

@Suite("egctl migrate infers renames from the original names a store records, with progress on a terminal")
struct EgctlMigrateRenameTests {
    /// A version 1 store with `count` shelves (one save each) and an empty store of version 2 (the target model).
    private func makeStores(_ scratch: Scratch, count: Int = 3) throws -> (store: String, target: String) {
        let store = scratch.file("shelves.eglog")
        let target = scratch.file("empty-v2.eglog")
        let container = try ModelContainer(path: store, model: ShelvesV1.model)
        let context = container.newBackgroundContext()
        for index in 0..<count {
            let shelf = ShelvesV1.Shelf()
            context.insert(shelf)
            shelf.label = "shelf \(index)"
            shelf.width = Int32(80 + index)
            try context.save()
        }
        try container.close()
        try ModelContainer(path: target, model: ShelvesV2.model).close()
        return (store, target)
    }

    @Test func aRenamedEntityAndAttributeKeepTheirValues() throws {
        let scratch = Scratch()
        let (store, target) = try makeStores(scratch)
        let result = try Egctl.run("migrate", store, "--model", target, "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let changes = try #require(try result.json()["changes"] as? [[String: String]])
        let kinds = changes.compactMap { $0["kind"] }
        #expect(kinds.contains("entityRenamed"))
        #expect(changes.contains { $0["kind"] == "propertyRenamed" && $0["property"] == "tag" })
        #expect(!kinds.contains("propertyRemoved"))

        let container = try ModelContainer(
            path: store, model: ShelvesV2.model, configuration: .init(recoveryHandler: nil))
        let bookcases = try container.newBackgroundContext().fetch(
            FetchDescriptor<ShelvesV2.Bookcase>(sortBy: [SortDescriptor(\.width)]))
        #expect(bookcases.map(\.tag) == ["shelf 0", "shelf 1", "shelf 2"])
        try container.close()
    }

    @Test func theProgressLineIsQuietWhenPiped() throws {
        let scratch = Scratch()
        let (store, target) = try makeStores(scratch)
        let result = try Egctl.run("migrate", store, "--model", target)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func theProgressLineShowsOnATerminal() throws {
        let scratch = Scratch()
        let (store, target) = try makeStores(scratch)
        // `script` runs egctl with a pseudo-terminal as its standard error, and copies what it writes.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = [
            "-qec", "'\(Egctl.executable.path)' migrate '\(store)' --model '\(target)' --dry-run", "/dev/null",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("\rmigrate (dry run) "))
        #expect(text.contains("% "))
        // The line is cleared before the report.
        #expect(text.contains("\u{1B}[2K"))
        #expect(text.contains("would migrate Shelves version 1 → Shelves version 2"))
    }
}
