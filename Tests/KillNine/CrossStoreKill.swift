import EventGraph
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// `KillNine cross-store`: kills a process in the middle of a save across two stores, at each step of it, and checks
// that once the two stores are opened together again both hold the save or neither does, and that opening them
// once more changes neither store's digest.

final class Shelf: ManagedObject {
    @Attribute var name: String = ""
    @Relationship(inverse: "shelf") var tags: Set<Tag>
}

final class Tag: ManagedObject {
    @Attribute var text: String = ""
    @Relationship var shelf: Shelf?
}

enum CrossStoreKill {
    /// Shelves in the default store, tags in the "Public" one: every tag of a shelf is a reference across them.
    static let model = try! ObjectModel(
        name: "CrossStoreKill", version: "1", types: [Shelf.self, Tag.self], configurations: ["Public": [Tag.self]])

    /// The steps a save across stores is killed at; `none` lets it finish.
    static let steps = ["prepared", "written-0", "written-1", "synced", "installed", "none"]

    static func stores(in directory: String) -> [StoreDescription] {
        [
            StoreDescription(path: directory + "/shelves.eglog"),
            StoreDescription(path: directory + "/tags.eglog", configuration: "Public"),
        ]
    }

    /// One shelf and its tag, saved together (one save across the two stores).
    static func saveShelf(named name: String, in container: ModelContainer) throws {
        let context = container.newBackgroundContext()
        let shelf = Shelf()
        context.insert(shelf)
        shelf.name = name
        let tag = Tag()
        context.insert(tag)
        tag.text = name
        tag.shelf = shelf
        try context.save()
    }

    /// `KillNine cross-store-save`: saves the shelf "second" and kills itself at `killAt` (SIGKILL: no clean-up).
    static func save(directory: String, killAt: String) -> Never {
        var configuration = ModelContainer.Configuration(recoveryHandler: nil)
        configuration.crossStoreStepObserver = { step in
            if step.description == killAt { kill(getpid(), SIGKILL) }
        }
        do {
            let container = try ModelContainer(
                model: model, stores: stores(in: directory), configuration: configuration)
            try saveShelf(named: "second", in: container)
            try container.close()
        } catch {
            FileHandle.standardError.write(Data("cross-store-save: \(error)\n".utf8))
            exit(1)
        }
        exit(0)
    }

    /// `KillNine cross-store`: every step, each in a directory of its own; exits 1 when a check fails.
    static func drive(directory: String, executablePath: String) -> Never {
        var failed = false
        for step in steps {
            let stepDirectory = directory + "/" + step
            do {
                let outcome = try check(step: step, directory: stepDirectory, executablePath: executablePath)
                print("\(step): \(outcome)")
            } catch {
                print("\(step): FAILED: \(error)")
                failed = true
            }
        }
        exit(failed ? 1 : 0)
    }

    struct CheckFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Saves "first", kills a save of "second" at `step`, and checks the stores reopened together.
    private static func check(step: String, directory: String, executablePath: String) throws -> String {
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let first = try ModelContainer(
            model: model, stores: stores(in: directory), configuration: .init(recoveryHandler: nil))
        try saveShelf(named: "first", in: first)
        try first.close()

        let child = Process()
        child.executableURL = URL(fileURLWithPath: executablePath)
        child.arguments = ["cross-store-save", "--directory", directory, "--kill-at", step]
        try child.run()
        child.waitUntilExit()
        let killed = child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGKILL
        guard killed == (step != "none"), step != "none" || child.terminationStatus == 0 else {
            throw CheckFailure(description: "the saver ended with status \(child.terminationStatus) (\(step))")
        }

        let (names, digests) = try reopen(directory)
        let (_, again) = try reopen(directory)
        guard digests == again else { throw CheckFailure(description: "reopening changed a digest") }
        // Before the second participant's part is written the save cannot have committed; after, it must have
        // (a killed process's writes are in the page cache, and opening together decides the save from them).
        let expected: Set<String> = ["prepared", "written-0"].contains(step) ? ["first"] : ["first", "second"]
        guard names.shelves == expected, names.tags == expected, names.linked == expected else {
            throw CheckFailure(
                description: "shelves \(names.shelves.sorted()), tags \(names.tags.sorted()), linked "
                    + "\(names.linked.sorted()); expected \(expected.sorted()) in both stores")
        }
        return expected.count == 2 ? "both stores hold the save" : "neither store holds the save"
    }

    /// Opens the two stores together: the shelves' and tags' names, the tags whose shelf has their name, and each
    /// store's digest.
    private static func reopen(_ directory: String) throws -> (
        names: (shelves: Set<String>, tags: Set<String>, linked: Set<String>), digests: [String]
    ) {
        let container = try ModelContainer(
            model: model, stores: stores(in: directory), configuration: .init(recoveryHandler: nil))
        defer { try? container.close() }
        let context = container.newBackgroundContext()
        let shelves = Set(try context.fetch(FetchDescriptor<Shelf>()).map(\.name))
        let tags = try context.fetch(FetchDescriptor<Tag>())
        let linked = Set(tags.filter { $0.shelf?.name == $0.text && $0.shelf?.tags.contains($0) == true }.map(\.text))
        let digests = try [ObjectModel.defaultConfigurationName, "Public"].map {
            "\(try container.stateDigest(ofConfiguration: $0))"
        }
        return ((shelves, Set(tags.map(\.text)), linked), digests)
    }
}
