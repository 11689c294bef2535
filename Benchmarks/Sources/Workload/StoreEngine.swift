import Foundation

/// When a save is acknowledged: after `fdatasync` (EventGraph `.full`, SQLite `synchronous=FULL`) or after the
/// write reaches the OS (EventGraph `.normal`, SQLite `synchronous=NORMAL` in WAL mode).
public enum DurabilityMode: String, Sendable {
    case durable, relaxed
}

/// The result of a measured read: elapsed seconds and a checksum of what was read, so that both engines can be
/// checked to have read the same posts and values.
public struct ReadResult: Sendable {
    public var seconds: Double
    public var checksum: Int

    public init(seconds: Double, checksum: Int) {
        self.seconds = seconds
        self.checksum = checksum
    }
}

/// One engine's implementation of every scenario. Each measures only the operation named, after its setup.
public protocol StoreEngine {
    /// The engine's name in reports.
    static var name: String { get }
    /// The files that make up the store at `path` (those that exist).
    static func storeFiles(at path: String) -> [String]

    /// Scenario 1: inserts `posts` (and the world's authors and tags) in one save / transaction, durable.
    static func bulkInsert(path: String, posts: [PostData], world: World) throws -> Double
    /// Scenario 2: one save / transaction per post into a store that holds the world's authors and tags.
    static func singleSaves(path: String, posts: [PostData], world: World, durability: DurabilityMode) throws -> Double
    /// Scenario 3: one writer thread per batch, each saving its posts one by one, durable.
    static func concurrentWriters(path: String, batches: [[PostData]], world: World) throws -> Double

    /// Builds a store of `count` generated posts in saves of `batchSize` (setup, not measured).
    static func build(path: String, generator: PostGenerator, count: Int, batchSize: Int) throws
    /// Changes the title of each of the `count` posts, in saves of `batchSize` (setup, not measured).
    static func updateTitles(path: String, generator: PostGenerator, count: Int, batchSize: Int) throws
    /// Scenario 8: compacts the store (EventGraph: `compact()`; SQLite: `VACUUM` and a truncating checkpoint);
    /// opening before and closing after are not measured.
    static func compact(path: String) throws -> Double
    /// Scenario 7: opens the store and fetches the post with `identity` by its unique key; returns the title.
    static func openAndFirstFetch(path: String, identity: Int64) throws -> (seconds: Double, title: String)
    /// Opens the store and closes it without reading anything (memory after open alone); returns the open's seconds.
    static func openOnly(path: String) throws -> Double
    /// `memory-fetch-all`: opens the store, fetches every post and reads every attribute (as `fetchAll()` does),
    /// keeping the results until the end; returns the seconds of open and fetch and the checksum of what was read.
    static func openAndFetchAll(path: String) throws -> ReadResult
    /// Brings the store to the state in which its size on disk is measured (SQLite: WAL checkpointed).
    static func settle(path: String) throws

    /// Opens a store for the read scenarios (kept open across runs).
    init(readingStoreAt path: String) throws
    /// Scenario 4: fetches every post and reads every attribute.
    func fetchAll() throws -> ReadResult
    /// Scenario 5: fetches each post by its ID and reads its title.
    func fetchByID(_ identities: [Int64]) throws -> ReadResult
    /// Scenario 6: `date == value` on the indexed date, reading each result's title.
    func fetchEqual(dates: [Double]) throws -> ReadResult
    /// Scenario 6: `lower <= date < upper` on the indexed date, reading each result's title.
    func fetchRange(_ ranges: [ClosedRange<Double>]) throws -> ReadResult
    /// Scenario 6: titles containing a word (case-sensitive; no index can help), reading each result's title.
    func fetchContaining(_ words: [String]) throws -> ReadResult
    /// Closes the store.
    func close() throws
}

extension StoreEngine {
    /// Deletes the store's files.
    public static func removeStore(at path: String) {
        for file in storeFiles(at: path) { try? FileManager.default.removeItem(atPath: file) }
    }

    /// The bytes of the store's files.
    public static func byteCount(at path: String) -> Int {
        storeFiles(at: path).reduce(0) { total, file in
            total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0)
        }
    }
}

/// A checksum step: mixes a value into a running checksum in an order-independent way (sum).
@inline(__always)
func mix(_ checksum: inout Int, _ title: String) {
    checksum &+= title.utf8.count &+ 1
}
