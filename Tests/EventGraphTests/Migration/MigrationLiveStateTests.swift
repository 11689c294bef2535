import EventGraph
import Foundation
import Testing

@Suite("A live-state migration writes the mapped state as a checkpoint, one chunk at a time")
struct MigrationLiveStateTests {
    /// 1,300 books on 3 shelves, in 4 transactions: the checkpoint of the migrated state has several chunks of
    /// books (a migration writes 512 objects per chunk) and one that holds both the last books and the shelves.
    private static let bookCount = 1300

    private func writeManyBooks(at path: String) throws -> UInt64 {
        let container = try ModelContainer(path: path, model: LibraryV1.model)
        let context = container.newBackgroundContext(name: "writer")
        var shelves: [LibraryV1.Shelf] = []
        for index in 0..<3 {
            let shelf = LibraryV1.Shelf()
            context.insert(shelf)
            shelf.label = "shelf \(index)"
            shelves.append(shelf)
        }
        var books: [LibraryV1.Book] = []
        for index in 0..<Self.bookCount {
            let book = LibraryV1.Book()
            context.insert(book)
            book.title = "book \(index)"
            book.pages = Int16(index)
            book.shelf = shelves[index % 3]
            books.append(book)
            if index % 500 == 499 { try context.save() }
        }
        try context.save()
        context.delete(books[7])
        try context.save()
        let last = container.lastTransactionID
        try container.close()
        return last
    }

    @Test func aStateOfManyChunksReopensWithTheReportedDigest() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let last = try writeManyBooks(at: path)
        let report = try StoreMigration.migrate(
            path: path, to: LibraryV2.model, options: StoreMigration.Options(historyMode: .liveState))
        #expect(report.objectCounts == ["Book": Self.bookCount - 1, "Bookcase": 3, "Reader": 0])
        // The chunks' payloads are counted as they are written: several, and more than the state's smallest size.
        #expect(report.targetByteCount > UInt64(Self.bookCount) * 8)

        let container = try ModelContainer(
            path: path, model: LibraryV2.model, configuration: .init(recoveryHandler: nil))
        #expect(container.lastTransactionID == last)
        #expect(try container.stateDigest() == report.stateDigest)
        let context = container.newBackgroundContext()
        let books = try context.fetch(FetchDescriptor<LibraryV2.Book>(sortBy: [SortDescriptor(\.pages)]))
        #expect(books.count == Self.bookCount - 1)
        #expect(books.map(\.pages) == (0..<Int64(Self.bookCount)).filter { $0 != 7 })
        #expect(books.allSatisfy { $0.language == "en" && $0.name == "book \($0.pages)" })
        let shelves = try context.fetch(FetchDescriptor<LibraryV2.Bookcase>(sortBy: [SortDescriptor(\.tag)]))
        #expect(shelves.map { $0.books.count } == [434, 432, 433])
        try container.close()
    }
}
