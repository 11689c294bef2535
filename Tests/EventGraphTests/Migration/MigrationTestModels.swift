import EventGraph
import Foundation
import Testing

/// Version 1 of a small library model used by the migration tests.
enum LibraryV1 {
    final class Book: ManagedObject {
        override class var entityName: String { "Book" }
        @Attribute var title: String = ""
        @Attribute var pages: Int16 = 0
        @Attribute var isbn: String? = nil
        @Attribute var weight: Float = 0
        @Relationship(inverse: "books") var shelf: Shelf?
    }

    final class Shelf: ManagedObject {
        override class var entityName: String { "Shelf" }
        @Attribute var label: String = ""
        @Relationship(inverse: "shelf") var books: Set<Book>
    }

    static let model = try! ObjectModel(name: "Library", version: "1", types: [Book.self, Shelf.self])
}

/// Version 2: `title` renamed `name`, `pages` widened to Int64, `weight` to Double, a `language` attribute added
/// with a default, the default of `pages` changed, `Shelf` renamed `Bookcase` (its `label` renamed `tag`), and a new `Reader` entity.
enum LibraryV2 {
    final class Book: ManagedObject {
        override class var entityName: String { "Book" }
        @Attribute(.originalName("title")) var name: String = ""
        @Attribute var pages: Int64 = 50  // a new default: objects that never set it keep 0
        @Attribute var isbn: String? = nil
        @Attribute var weight: Double = 0
        @Attribute var language: String = "en"
        @Relationship(inverse: "books") var shelf: Bookcase?
    }

    final class Bookcase: ManagedObject {
        override class var entityName: String { "Bookcase" }
        override class var originalEntityName: String? { "Shelf" }
        @Attribute(.originalName("label")) var tag: String = ""
        @Relationship(inverse: "shelf") var books: Set<Book>
    }

    final class Reader: ManagedObject {
        override class var entityName: String { "Reader" }
        @Attribute var name: String = ""
    }

    static let model = try! ObjectModel(name: "Library", version: "2", types: [Book.self, Bookcase.self, Reader.self])
}

/// Version 2 with `isbn` unique: existing duplicates refuse the migration.
enum LibraryUniqueISBN {
    final class Book: ManagedObject {
        override class var entityName: String { "Book" }
        @Attribute var title: String = ""
        @Attribute var pages: Int16 = 0
        @Attribute(.unique) var isbn: String? = nil
        @Attribute var weight: Float = 0
        @Relationship(inverse: "books") var shelf: Shelf?
    }

    final class Shelf: ManagedObject {
        override class var entityName: String { "Shelf" }
        @Attribute var label: String = ""
        @Relationship(inverse: "shelf") var books: Set<Book>
    }

    static let model = try! ObjectModel(name: "Library", version: "2", types: [Book.self, Shelf.self])
}

/// Writes a version 1 library: three shelves, `bookCount` books saved one per transaction, one book retitled and
/// one deleted later (so history differs from the final state). Returns the last transaction ID.
@discardableResult
func writeLibraryV1(
    at path: String, bookCount: Int = 10, booksPerTransaction: Int = 1, duplicateISBN: Bool = false
) throws -> UInt64 {
    let container = try ModelContainer(path: path, model: LibraryV1.model)
    let context = container.newBackgroundContext(name: "writer")
    var shelves: [LibraryV1.Shelf] = []
    for index in 0..<3 {
        let shelf = LibraryV1.Shelf()
        context.insert(shelf)
        shelf.label = "shelf \(index)"
        shelves.append(shelf)
    }
    try context.save()
    var books: [LibraryV1.Book] = []
    for index in 0..<bookCount {
        let book = LibraryV1.Book()
        context.insert(book)
        book.title = "book \(index)"
        book.pages = Int16(100 + index)
        book.weight = Float(index) + 0.5
        book.isbn = duplicateISBN && (index == 2 || index == 3) ? "same" : "isbn-\(index)"
        book.shelf = shelves[index % 3]
        books.append(book)
        if (index + 1) % booksPerTransaction == 0 || index == bookCount - 1 { try context.save() }
    }
    books[0].title = "retitled"
    try context.save()
    context.delete(books[1])
    try context.save()
    let last = container.lastTransactionID
    try container.close()
    return last
}

/// Version 3: `name` renamed again (`displayName`), and the default of `language` changed to "fr" (books that
/// never set it were "en" in version 2, and stay so).
enum LibraryV3 {
    final class Book: ManagedObject {
        override class var entityName: String { "Book" }
        @Attribute(.originalName("name")) var displayName: String = ""
        @Attribute var pages: Int64 = 50
        @Attribute var isbn: String? = nil
        @Attribute var weight: Double = 0
        @Attribute var language: String = "fr"
        @Relationship(inverse: "books") var shelf: Bookcase?
    }

    final class Bookcase: ManagedObject {
        override class var entityName: String { "Bookcase" }
        @Attribute var tag: String = ""
        @Relationship(inverse: "shelf") var books: Set<Book>
    }

    final class Reader: ManagedObject {
        override class var entityName: String { "Reader" }
        @Attribute var name: String = ""
    }

    static let model = try! ObjectModel(name: "Library", version: "3", types: [Book.self, Bookcase.self, Reader.self])
}

/// After a migration of a library store that may have failed: exactly one model opens the store, with the state it
/// should have — version 1 with `oldDigest` (and the migration failed), or version 2 with `newDigest`.
func expectOldOrNewLibrary(at path: String, succeeded: Bool, oldDigest: StateDigest, newDigest: StateDigest?) throws {
    var never = ModelContainer.Configuration(recoveryHandler: nil)
    never.migration = .never
    if let old = try? ModelContainer(path: path, model: LibraryV1.model, configuration: never) {
        #expect(!succeeded)
        #expect(try old.stateDigest() == oldDigest)
        try old.close()
    } else {
        let new = try ModelContainer(path: path, model: LibraryV2.model, configuration: never)
        #expect(try new.stateDigest() == newDigest)
        try new.close()
    }
}
