import EventGraph
import Foundation
import Testing

@Suite("A live-state migration writes the mapped state as a checkpoint, one chunk at a time")
struct MigrationLiveStateTests {
    /// 1,300 books on 3 shelves, 500 to a transaction: the checkpoint of the migrated state has several chunks of
    /// books (a migration writes 512 objects per chunk) and one that holds both the last books and the shelves.
    private static let bookCount = 1300

    @Test func aStateOfManyChunksReopensWithTheReportedDigest() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let last = try writeLibraryV1(at: path, bookCount: Self.bookCount, booksPerTransaction: 500)
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
        // Book 0 was retitled, book 1 deleted.
        #expect(books.map(\.pages) == [100] + (102..<100 + Int64(Self.bookCount)))
        #expect(books.dropFirst().allSatisfy { $0.language == "en" && $0.name == "book \($0.pages - 100)" })
        #expect(books.first?.name == "retitled")
        let shelves = try context.fetch(FetchDescriptor<LibraryV2.Bookcase>(sortBy: [SortDescriptor(\.tag)]))
        #expect(shelves.map { $0.books.count } == [434, 432, 433])
        try container.close()
    }
}
