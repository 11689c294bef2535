// Measures LogFormat throughput on this machine: appends of small and 1 MiB changesets per durability mode,
// 8 concurrent appenders against 1 (group commit), sequential scan (verify + decompress) throughput, and the
// compression ratio of realistic changesets. Usage: log-throughput [directory]
//
// This package cannot see LogFormat's `package` declarations, so it uses only the module's small public API for
// direct users of the log (writer, reader, changeset values, `LogWriter.syncCount`; see LogFormat's documentation).
import Foundation
import LogFormat
import Synchronization

let directory = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : NSTemporaryDirectory()
func freshPath(_ name: String) -> String {
    let path = directory + "/eg-bench-\(name)-\(UUID().uuidString.prefix(8)).eglog"
    return path
}
func remove(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
    try? FileManager.default.removeItem(atPath: path + ".lock")
}
func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

// A realistic changeset: inserts of blog posts (seed 000's model) with text that compresses like prose.
let words = [
    "swift", "event", "graph", "store", "replay", "snapshot", "context", "fault", "the", "a", "of", "and",
    "to", "in", "log", "frame", "commit", "durable", "linux", "object", "relationship", "inverse", "author", "post",
]
func sentence(_ count: Int) -> String {
    var rng = SystemRandomNumberGenerator()
    return (0..<count).map { _ in words.randomElement(using: &rng)! }.joined(separator: " ")
}
func realisticChangeset(id: UInt64, posts: Int, firstKey: UInt64) -> [UInt8] {
    var operations: [ChangeOperation] = []
    for index in 0..<posts {
        let key = firstKey + UInt64(index)
        operations.append(
            .insert(
                ObjectReference(entityIndex: 1, key: key),
                [
                    PropertyChange(propertyIndex: 0, value: .attribute(.int64(Int64(key)))),
                    PropertyChange(propertyIndex: 1, value: .attribute(.string(sentence(6)))),
                    PropertyChange(propertyIndex: 2, value: .attribute(.string(sentence(50)))),
                    PropertyChange(propertyIndex: 3, value: .attribute(.string(sentence(12)))),
                    PropertyChange(
                        propertyIndex: 4, value: .attribute(.string("https://blog.example.com/posts/\(key)"))),
                    PropertyChange(propertyIndex: 5, value: .attribute(.date(Double(key) * 60))),
                    PropertyChange(propertyIndex: 6, value: .toOne(ObjectReference(entityIndex: 0, key: key % 10))),
                ]))
    }
    let changeset = Changeset(
        transactionID: id, commitTimeMicroseconds: Int64(id), author: "bench", nextKey: firstKey + UInt64(posts),
        operations: operations)
    return try! changeset.encoded()
}

print(
    "LogFormat throughput on \(ProcessInfo.processInfo.processorCount) cores, CRC32C hardware: \(CRC32C.isHardwareAccelerated)"
)
print("")

// 1. Appends per durability mode.
let small = realisticChangeset(id: 1, posts: 1, firstKey: 1)
let large = realisticChangeset(id: 1, posts: 2200, firstKey: 1)  // ≈ 1 MiB
print("changeset sizes: small \(small.count) B, large \(large.count) B")
for (label, payload, count) in [("small", small, 2000), ("1 MiB", large, 60)] {
    for durability in [Durability.full, .normal, .none] {
        let path = freshPath("append")
        defer { remove(path) }
        let writer = try LogWriter(path: path, options: .init(durability: durability))
        let elapsed = try seconds {
            for id in 1...count { try writer.appendTransaction(id: UInt64(id), payload: payload) }
            try writer.sync()
        }
        try writer.close()
        let mb = Double(payload.count * count) / 1e6
        print(
            String(
                format: "append %-6@ %-7@ %8.0f txn/s  %8.1f MB/s (payload)", label as NSString,
                "\(durability)" as NSString, Double(count) / elapsed, mb / elapsed))
    }
}
print("")

// 2. Group commit: N concurrent appenders, durability .full. Like the object layer, each appender allocates its
// transaction ID and queues its frames under one lock (so IDs reach the file in order), then waits for durability
// outside it, where concurrent appenders share an fdatasync.
func concurrentCommits(threads: Int, perThread: Int) throws -> (perSecond: Double, syncs: Int) {
    let path = freshPath("group")
    defer { remove(path) }
    let writer = try LogWriter(path: path, options: .init(durability: .full))
    let nextID = Mutex<UInt64>(0)
    // Real threads: DispatchQueue.concurrentPerform would run only as many as there are cores.
    let elapsed = seconds {
        let group = DispatchGroup()
        for _ in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                for _ in 0..<perThread {
                    let pending = try! nextID.withLock { id in
                        id += 1
                        return try writer.enqueueTransaction(id: id, payload: small)
                    }
                    try! writer.waitUntilDurable(pending)
                }
                group.leave()
            }
        }
        group.wait()
    }
    let syncs = writer.syncCount
    try writer.close()
    return (Double(threads * perThread) / elapsed, syncs)
}
let one = try concurrentCommits(threads: 1, perThread: 2000)
let eight = try concurrentCommits(threads: 8, perThread: 2000)
let sixtyFour = try concurrentCommits(threads: 64, perThread: 250)
print(String(format: "group commit, .full:  1 appender %8.0f commits/s (%d syncs)", one.perSecond, one.syncs))
print(
    String(
        format: "group commit, .full:  8 appenders %7.0f commits/s (%d syncs)  → %.1f× one", eight.perSecond,
        eight.syncs, eight.perSecond / one.perSecond))
print(
    String(
        format: "group commit, .full: 64 appenders %7.0f commits/s (%d syncs)  → %.1f× one", sixtyFour.perSecond,
        sixtyFour.syncs, sixtyFour.perSecond / one.perSecond))
print("")

// 3. Sequential scan: verify every frame and decompress every payload.
do {
    let path = freshPath("scan")
    defer { remove(path) }
    let writer = try LogWriter(path: path, options: .init(durability: .none))
    var id: UInt64 = 0
    var key: UInt64 = 1
    var rawBytes = 0
    for batch in 0..<400 {
        id += 1
        let posts = batch % 10 == 0 ? 2000 : 200
        let payload = realisticChangeset(id: id, posts: posts, firstKey: key)
        key += UInt64(posts)
        rawBytes += payload.count
        try writer.appendTransaction(id: id, payload: payload)
    }
    try writer.close()
    let reader = try LogReader(path: path)
    var best = Double.infinity
    var report: ScanReport?
    for _ in 0..<5 {
        let t = try seconds { report = try reader.scanTransactions() }
        best = min(best, t)
    }
    let r = report!
    print(
        String(
            format: "scan (verify + decompress): %.0f MB/s of payload, %.0f MB/s of file, %.0f txn/s (best of 5)",
            Double(r.rawPayloadByteCount) / best / 1e6, Double(r.fileByteCount) / best / 1e6,
            Double(r.transactionCount) / best))
    print(
        String(
            format: "compression on realistic changesets: %.2f× (%d → %d bytes stored)",
            Double(r.rawPayloadByteCount) / Double(r.storedBodyByteCount), r.rawPayloadByteCount, r.storedBodyByteCount)
    )
    var decodeBest = Double.infinity
    for _ in 0..<3 {
        let t = try seconds {
            try reader.scanTransactions { transaction in _ = try transaction.changeset() }
        }
        decodeBest = min(decodeBest, t)
    }
    print(
        String(
            format: "scan + decode every changeset: %.0f MB/s of payload, %.0f txn/s",
            Double(r.rawPayloadByteCount) / decodeBest / 1e6, Double(r.transactionCount) / decodeBest))
}
