import Foundation
import GRDB

/// The scenarios on SQLite through GRDB, as its documentation recommends: a `DatabasePool` (WAL mode), records
/// for inserts and fetches, cached statements for repeated queries, one transaction per save.
public final class GRDBEngine: StoreEngine {
    public static let name = "GRDB"

    public static func storeFiles(at path: String) -> [String] {
        [path, path + "-wal", path + "-shm"].filter { FileManager.default.fileExists(atPath: $0) }
    }

    /// Opens (or creates) the database in WAL mode with the durability asked for.
    static func openPool(path: String, durability: DurabilityMode, create: Bool = false) throws -> DatabasePool {
        let pool = try DatabasePool(path: path, configuration: Configuration())
        // GRDB sets `synchronous = NORMAL` on the writer when it enables WAL, after `prepareDatabase` has run,
        // so the durability is set here, on the pool's single writer connection, and checked.
        let wanted = durability == .durable ? 2 : 1
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = \(durability == .durable ? "FULL" : "NORMAL")")
            let actual = try Int.fetchOne(db, sql: "PRAGMA synchronous")
            guard actual == wanted else { throw WorkloadError("PRAGMA synchronous is \(actual ?? -1), not \(wanted)") }
            if create { try SQLiteSchema.create(db) }
        }
        return pool
    }

    static func insertWorld(_ world: World, _ db: Database) throws {
        for author in world.authors {
            try AuthorRecord(id: author.identity, name: author.name, email: author.email).insert(db)
        }
        for (index, name) in world.tags.enumerated() {
            try TagRecord(id: Int64(index + 1), name: name).insert(db)
        }
    }

    /// Inserts one post, its author link and its tag links.
    @inline(__always)
    static func insert(_ data: PostData, world: World, _ db: Database) throws {
        try PostRecord(
            id: data.identity, title: data.title, body: data.body, excerpt: data.excerpt, url: data.url,
            date: data.date, authorId: world.authors[data.authorIndex].identity
        ).insert(db)
        for tag in data.tagIndices {
            try PostTagRecord(postId: data.identity, tagId: Int64(tag + 1)).insert(db)
        }
    }

    static func createWorld(path: String, world: World, durability: DurabilityMode) throws -> DatabasePool {
        let pool = try openPool(path: path, durability: durability, create: true)
        try pool.write { db in try insertWorld(world, db) }
        return pool
    }

    public static func bulkInsert(path: String, posts: [PostData], world: World) throws -> Double {
        let pool = try openPool(path: path, durability: .durable, create: true)
        defer { try? pool.close() }
        return try measureSeconds {
            try pool.write { db in
                try insertWorld(world, db)
                for data in posts { try insert(data, world: world, db) }
            }
        }
    }

    public static func singleSaves(path: String, posts: [PostData], world: World, durability: DurabilityMode) throws
        -> Double
    {
        let pool = try createWorld(path: path, world: world, durability: durability)
        defer { try? pool.close() }
        return try measureSeconds {
            for data in posts {
                try pool.write { db in try insert(data, world: world, db) }
            }
        }
    }

    public static func concurrentWriters(path: String, batches: [[PostData]], world: World) throws -> Double {
        let pool = try createWorld(path: path, world: world, durability: .durable)
        defer { try? pool.close() }
        return try runWriterThreads(count: batches.count) { index in
            {
                for data in batches[index] {
                    try pool.write { db in try insert(data, world: world, db) }
                }
            }
        }
    }

    public static func build(path: String, generator: PostGenerator, count: Int, batchSize: Int) throws {
        let pool = try createWorld(path: path, world: generator.world, durability: .relaxed)
        defer { try? pool.close() }
        for start in stride(from: 0, to: count, by: batchSize) {
            try pool.write { db in
                for index in start..<min(count, start + batchSize) {
                    try insert(generator.post(at: index), world: generator.world, db)
                }
            }
        }
    }

    public static func updateTitles(path: String, generator: PostGenerator, count: Int, batchSize: Int) throws {
        let pool = try openPool(path: path, durability: .relaxed)
        defer { try? pool.close() }
        for start in stride(from: 0, to: count, by: batchSize) {
            try pool.write { db in
                let statement = try db.cachedStatement(sql: "UPDATE post SET title = ? WHERE id = ?")
                for index in start..<min(count, start + batchSize) {
                    try statement.execute(arguments: [
                        generator.updatedTitle(ofPostAt: index, generation: 1), index + 1,
                    ])
                }
            }
        }
    }

    public static func compact(path: String) throws -> Double {
        let pool = try openPool(path: path, durability: .durable)
        defer { try? pool.close() }
        return try measureSeconds {
            try pool.vacuum()
            try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        }
    }

    public static func openAndFirstFetch(path: String, identity: Int64) throws -> (seconds: Double, title: String) {
        var title = ""
        var opened: DatabasePool?
        let seconds = try measureSeconds {
            let pool = try openPool(path: path, durability: .durable)
            opened = pool
            title = try pool.read { db in try PostRecord.fetchOne(db, key: identity)?.title } ?? ""
        }
        try opened?.close()
        return (seconds, title)
    }

    public static func openOnly(path: String) throws -> Double {
        var opened: DatabasePool?
        let seconds = try measureSeconds { opened = try openPool(path: path, durability: .durable) }
        try opened?.close()
        return seconds
    }

    public static func openAndFetchAll(path: String) throws -> ReadResult {
        var checksum = 0
        var opened: DatabasePool?
        var posts: [PostRecord] = []
        let seconds = try measureSeconds {
            let pool = try openPool(path: path, durability: .durable)
            opened = pool
            posts = try pool.read { db in try PostRecord.fetchAll(db) }
            checksum = Self.checksum(of: posts)
        }
        withExtendedLifetime(posts) {}
        try opened?.close()
        return ReadResult(seconds: seconds, checksum: checksum)
    }

    /// Reads every attribute of every post (fetch-all and memory-fetch-all).
    static func checksum(of posts: [PostRecord]) -> Int {
        var checksum = 0
        for post in posts {
            checksum &+= Int(post.id) &+ Int(post.date)
            checksum &+= post.title.utf8.count &+ post.body.utf8.count &+ post.excerpt.utf8.count
            checksum &+= post.url.utf8.count
        }
        return checksum
    }

    public static func settle(path: String) throws {
        let pool = try openPool(path: path, durability: .relaxed)
        try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        try pool.close()
    }

    // MARK: - Reads

    let pool: DatabasePool

    public init(readingStoreAt path: String) throws {
        pool = try Self.openPool(path: path, durability: .relaxed)
    }

    public func fetchAll() throws -> ReadResult {
        var checksum = 0
        let seconds = try measureSeconds {
            checksum = Self.checksum(of: try pool.read { db in try PostRecord.fetchAll(db) })
        }
        return ReadResult(seconds: seconds, checksum: checksum)
    }

    public func fetchByID(_ identities: [Int64]) throws -> ReadResult {
        var checksum = 0
        let seconds = try measureSeconds {
            try pool.read { db in
                let statement = try db.cachedStatement(sql: "SELECT * FROM post WHERE id = ?")
                for id in identities {
                    if let post = try PostRecord.fetchOne(statement, arguments: [id]) { mix(&checksum, post.title) }
                }
            }
        }
        return ReadResult(seconds: seconds, checksum: checksum)
    }

    public func fetchEqual(dates: [Double]) throws -> ReadResult {
        try query(dates, sql: "SELECT * FROM post WHERE date = ?") { [$0] }
    }

    public func fetchRange(_ ranges: [ClosedRange<Double>]) throws -> ReadResult {
        try query(ranges, sql: "SELECT * FROM post WHERE date >= ? AND date <= ?") { [$0.lowerBound, $0.upperBound] }
    }

    public func fetchContaining(_ words: [String]) throws -> ReadResult {
        // `instr` is case-sensitive like EventGraph's `contains` (LIKE would not be).
        try query(words, sql: "SELECT * FROM post WHERE instr(title, ?) > 0") { [$0] }
    }

    /// Runs one cached statement per value in one read access, fetching records and reading each title.
    private func query<Value>(_ values: [Value], sql: String, _ arguments: (Value) -> StatementArguments) throws
        -> ReadResult
    {
        var checksum = 0
        let seconds = try measureSeconds {
            try pool.read { db in
                let statement = try db.cachedStatement(sql: sql)
                for value in values {
                    for post in try PostRecord.fetchAll(statement, arguments: arguments(value)) {
                        mix(&checksum, post.title)
                    }
                }
            }
        }
        return ReadResult(seconds: seconds, checksum: checksum)
    }

    public func close() throws {
        try pool.close()
    }
}

extension GRDBEngine {
    /// The version of the SQLite library GRDB links.
    public static var sqliteVersion: String {
        (try? DatabaseQueue().read { db in try String.fetchOne(db, sql: "SELECT sqlite_version()") } ?? "") ?? "?"
    }
}
