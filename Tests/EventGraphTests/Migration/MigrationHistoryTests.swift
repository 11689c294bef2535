import EventGraph
import Foundation
import Testing

/// Writes a version 1 library by two authors: alice inserts "first" (transaction 1), bob retitles it "second"
/// (2), alice inserts "other" (3). Returns the first book's key.
@discardableResult
private func writeTwoAuthors(at path: String) throws -> UInt64 {
    let container = try ModelContainer(path: path, model: LibraryV1.model)
    let alice = container.newBackgroundContext(name: "alice")
    let book = LibraryV1.Book()
    alice.insert(book)
    book.title = "first"
    book.pages = 10
    try alice.save()
    let bob = container.newBackgroundContext(name: "bob")
    let same = try #require(try bob.fetch(FetchDescriptor<LibraryV1.Book>()).first)
    same.title = "second"
    try bob.save()
    let other = LibraryV1.Book()
    alice.insert(other)
    other.title = "other"
    try alice.save()
    let key = book.objectID.key
    try container.close()
    return key
}

@Suite("History across a migration: the old transactions, under the new model")
struct MigrationHistoryTests {
    /// After a migration that keeps history, the change feed and as-of views give the old transactions' IDs, commit
    /// times and authors, with the renamed attribute under its new name and the added one at its default.
    @Test func aHistoryKeepingMigrationKeepsTransactionsAuthorsAndTimes() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let key = try writeTwoAuthors(at: path)
        let old = try ModelContainer(path: path, model: LibraryV1.model)
        let before = try old.changes(after: 0)
        try old.close()
        try StoreMigration.migrate(path: path, to: LibraryV2.model)

        let container = try ModelContainer(path: path, model: LibraryV2.model)
        let after = try container.changes(after: 0)
        #expect(after.map(\.transactionID) == [1, 2, 3])
        #expect(after.map(\.transactionID) == before.map(\.transactionID))
        #expect(after.map(\.commitTimeMicroseconds) == before.map(\.commitTimeMicroseconds))
        #expect(after.map(\.author) == ["alice", "bob", "alice"])
        let retitle = try #require(after[1].changes.first)
        #expect(retitle.objectID.key == key)
        #expect(retitle.changedKeys == ["name"])
        #expect(retitle.values["name"] == .attribute(.string("second")))
        #expect(retitle.oldValues["name"] == .attribute(.string("first")))

        for (transaction, name) in [(UInt64(1), "first"), (2, "second")] {
            let view = try container.view(asOfTransaction: transaction)
            #expect(view.lastTransactionID == transaction)
            let books = try view.newBackgroundContext().fetch(FetchDescriptor<LibraryV2.Book>())
            #expect(books.map(\.name) == [name])
            #expect(books.map(\.language) == ["en"])  // added with its default
            #expect(books.map(\.pages) == [10])  // widened
            try view.close()
        }
        try container.close()
    }

    /// After a migration that keeps only the live state, the change feed and as-of views before it say that the
    /// earlier history is gone; the state and what comes after work.
    @Test func aLiveStateMigrationSaysEarlierHistoryIsGone() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try writeTwoAuthors(at: path)
        try StoreMigration.migrate(path: path, to: LibraryV2.model, options: .init(historyMode: .liveState))

        let container = try ModelContainer(path: path, model: LibraryV2.model)
        #expect(container.lastTransactionID == 3)
        let feed = try #require(throws: EventGraphError.self) { try container.changes(after: 0) }
        #expect(feed.code == .historyCompacted)
        let view = try #require(throws: EventGraphError.self) { try container.view(asOfTransaction: 2) }
        #expect(view.message.contains("compacted at transaction 3"), "\(view)")
        #expect(view.message.contains("a migration that kept only the live state); history before it is gone"))
        #expect(try container.changes(after: 3).isEmpty)
        let context = container.newBackgroundContext(name: "carol")
        let book = LibraryV2.Book()
        context.insert(book)
        book.name = "later"
        try context.save()
        #expect(try container.changes(after: 3).map(\.author) == ["carol"])
        let current = try container.view(asOfTransaction: 3)
        #expect(
            try current.newBackgroundContext().fetch(FetchDescriptor<LibraryV2.Book>()).map(\.name).sorted()
                == ["other", "second"])
        try current.close()
        try container.close()
    }
}
