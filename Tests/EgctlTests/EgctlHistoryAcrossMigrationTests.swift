import EventGraph
import Foundation
import Testing

/// Version 1 of a notes model, and version 2 with `title` renamed `heading`, `rank` widened and `status` added.
private enum NotesV1 {
    final class Note: ManagedObject {
        override class var entityName: String { "Note" }
        @Attribute var title: String = ""
        @Attribute var rank: Int16 = 0
    }

    static let model = try! ObjectModel(name: "Notes", version: "1", types: [Note.self])
}

private enum NotesV2 {
    final class Note: ManagedObject {
        override class var entityName: String { "Note" }
        @Attribute(.originalName("title")) var heading: String = ""
        @Attribute var rank: Int64 = 0
        @Attribute var status: String = "draft"
    }

    static let model = try! ObjectModel(name: "Notes", version: "2", types: [Note.self])
}

@Suite("egctl history and replay --until across a migration")
struct EgctlHistoryAcrossMigrationTests {
    /// A version 1 store — alice inserts a note (transaction 1), bob retitles it (2), alice inserts another (3) —
    /// and an empty version 2 store; returns their paths and the first note's URI.
    private static func writeStores(_ scratch: Scratch) throws -> (store: String, target: String, uri: String) {
        let store = scratch.file("notes.eglog")
        let target = scratch.file("empty-v2.eglog")
        let container = try ModelContainer(path: store, model: NotesV1.model)
        let alice = container.newBackgroundContext(name: "alice")
        let note = NotesV1.Note()
        alice.insert(note)
        note.title = "first"
        note.rank = 7
        try alice.save()
        let bob = container.newBackgroundContext(name: "bob")
        let same = try #require(try bob.fetch(FetchDescriptor<NotesV1.Note>()).first)
        same.title = "second"
        try bob.save()
        let other = NotesV1.Note()
        alice.insert(other)
        other.title = "other"
        try alice.save()
        let uri = "eventgraph:///Note/\(note.objectID.key)"
        try container.close()
        try ModelContainer(path: target, model: NotesV2.model).close()
        return (store, target, uri)
    }

    /// The changesets `egctl replay --changesets --json` prints, one JSON object a line.
    private static func changesets(_ store: String) throws -> [[String: Any]] {
        try Egctl.run("replay", store, "--changesets", "--json").stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// The transaction, time and author of each history entry (or changeset).
    private static func stamps(_ history: [[String: Any]]) -> [String] {
        history.map { "\($0["transaction"]!) \($0["time"]!) \($0["author"]!)" }
    }

    @Test func historyAndReplayAfterAMigrationThatKeepsHistory() throws {
        let scratch = Scratch()
        let (store, target, uri) = try Self.writeStores(scratch)
        let before = try #require(try Egctl.run("history", store, uri, "--json").json()["history"] as? [[String: Any]])
        #expect(before.count == 2)
        let changesetsBefore = try Self.changesets(store)
        #expect(changesetsBefore.count == 3)
        let migrate = try Egctl.run("migrate", store, "--model", target)
        #expect(migrate.status == 0, "\(migrate.stderr)")

        let result = try Egctl.run("history", store, uri, "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let json = try result.json()
        let after = try #require(json["history"] as? [[String: Any]])
        #expect(Self.stamps(after) == Self.stamps(before))
        #expect(after.map { "\($0["author"]!)" } == ["alice", "bob"])
        let update = try #require((after[1]["changes"] as? [[String: Any]])?.first)
        #expect(update["property"] as? String == "heading")
        #expect(update["old"] as? String == "first")
        #expect(update["new"] as? String == "second")
        #expect(json["historyGoneUpToTransaction"] is NSNull)
        let text = try Egctl.run("history", store, uri).stdout
        #expect(text.contains("heading: \"first\" → \"second\""), "\(text)")
        #expect(text.contains("by bob"))
        #expect(!text.contains("title"))

        // The state as of transaction 2, on the new model: the same as the library's as-of view.
        let replay = try Egctl.run("replay", store, "--until", "2", "--summary", "--json")
        #expect(replay.status == 0, "\(replay.stderr)")
        let summary = try replay.json()
        #expect(summary["lastTransactionID"] as? Int == 2)
        #expect(summary["objectCount"] as? Int == 1)
        let container = try ModelContainer(path: store, model: NotesV2.model)
        let view = try container.view(asOfTransaction: 2)
        #expect(summary["stateDigest"] as? String == (try view.stateDigest()).description)
        let notes = try view.newBackgroundContext().fetch(FetchDescriptor<NotesV2.Note>())
        #expect(notes.map(\.heading) == ["second"])
        #expect(notes.map(\.status) == ["draft"])
        #expect(notes.map(\.rank) == [7])
        try view.close()
        try container.close()
        // Every changeset keeps its transaction, time and author.
        #expect(Self.stamps(try Self.changesets(store)) == Self.stamps(changesetsBefore))
        let changesets = try Egctl.run("replay", store, "--until", "2", "--changesets").stdout
        #expect(changesets.contains("by alice") && changesets.contains("by bob"), "\(changesets)")
        #expect(changesets.contains("heading") && !changesets.contains("title"), "\(changesets)")
    }

    @Test func historyAndReplaySayEarlierHistoryIsGoneAfterALiveStateMigration() throws {
        let scratch = Scratch()
        let (store, target, uri) = try Self.writeStores(scratch)
        let migrate = try Egctl.run("migrate", store, "--model", target, "--live-state")
        #expect(migrate.status == 0, "\(migrate.stderr)")

        let result = try Egctl.run("history", store, uri)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("no changes to \(uri) in the log; the log keeps no history up to transaction 3"))
        #expect(result.stdout.contains("a migration that kept only the live state"))
        let json = try Egctl.run("history", store, uri, "--json").json()
        #expect(json["historyGoneUpToTransaction"] as? Int == 3)
        #expect((json["history"] as? [Any])?.isEmpty == true)
        // An entity the model lacks is still an error.
        let unknown = try Egctl.run("history", store, "eventgraph:///Nothing/1")
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("no entity named 'Nothing'"))

        let replay = try Egctl.run("replay", store, "--until", "2", "--summary")
        #expect(replay.status != 0)
        #expect(replay.stderr.contains("transaction 2 is not in the log"), "\(replay.stderr)")
        #expect(replay.stderr.contains("the state before that is gone"))
        let current = try Egctl.run("replay", store, "--until", "3", "--summary", "--json")
        #expect(current.status == 0, "\(current.stderr)")
        #expect(try current.json()["objectCount"] as? Int == 2)

        // A later save has history again, and the note says what is gone.
        let container = try ModelContainer(path: store, model: NotesV2.model)
        let context = container.newBackgroundContext(name: "carol")
        let note = try #require(
            try context.fetch(FetchDescriptor<NotesV2.Note>(sortBy: [SortDescriptor(\.heading)])).last)
        note.heading = "third"
        try context.save()
        try container.close()
        let later = try Egctl.run("history", store, uri)
        #expect(later.stdout.contains("transaction 4"), "\(later.stdout)")
        #expect(later.stdout.contains("by carol"))
        #expect(later.stdout.contains("(the log keeps no history up to transaction 3"))
    }
}
