import Foundation
import LogFormat
import Testing

@Suite("egctl on damaged stores and bad input")
struct EgctlDamageTests {
    /// A sealed demo store and its size.
    func makeStore(_ scratch: Scratch, posts: Int = 300) throws -> (String, Int) {
        let store = scratch.file("blog.eglog")
        try Egctl.run("demo", store, "--posts", "\(posts)")
        let size = try FileManager.default.attributesOfItem(atPath: store)[.size] as! Int
        return (store, size)
    }

    func frameOffsets(_ store: String) throws -> [UInt64] {
        var offsets: [UInt64] = []
        try LogReader(path: store).scan { record in
            if case .transaction(let transaction) = record { offsets.append(transaction.byteOffset) }
        }
        return offsets
    }

    @Test("a store cut in the middle of its last frame verifies (exit 0) and reports the torn tail")
    func tornTail() throws {
        let scratch = Scratch()
        let (store, _) = try makeStore(scratch)
        let last = try #require(try frameOffsets(store).last)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: store))
        try handle.truncate(atOffset: last + 30)
        try handle.close()
        let verify = try Egctl.run("verify", store)
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        #expect(verify.stdout.contains("torn tail"))
        let json = try Egctl.run("verify", store, "--json").json()
        #expect((json["tail"] as? [String: Any])?["state"] as? String == "torn")
    }

    @Test("zeros after the last frame (a crashed writer's preallocated space) are named so, not a torn tail")
    func preallocatedSpace() throws {
        let scratch = Scratch()
        let (store, size) = try makeStore(scratch)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: store))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(count: 64 << 10))
        try handle.close()
        let verify = try Egctl.run("verify", store)
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        #expect(verify.stdout.contains("65536 bytes of preallocated space") && !verify.stdout.contains("torn tail"))
        let json = try Egctl.run("verify", store, "--json").json()
        let tail = json["tail"] as? [String: Any]
        #expect(tail?["state"] as? String == "preallocated")
        #expect(tail?["byteOffset"] as? Int == size)
    }

    @Test("a flipped bit in synced data: verify exits 1 naming the offset; salvage keeps everything before it")
    func flippedBit() throws {
        let scratch = Scratch()
        let (store, _) = try makeStore(scratch)
        let offsets = try frameOffsets(store)
        let victim = offsets[offsets.count / 2]
        var bytes = try Data(contentsOf: URL(fileURLWithPath: store))
        bytes[Int(victim) + 60] ^= 0x10
        try bytes.write(to: URL(fileURLWithPath: store))

        let verify = try Egctl.run("verify", store)
        #expect(verify.status == 1)
        #expect(verify.stdout.contains("byte offset \(victim)"))
        let json = try Egctl.run("verify", store, "--json").json()
        #expect((json["tail"] as? [String: Any])?["byteOffset"] as? Int == Int(victim))

        let output = scratch.file("salvaged.eglog")
        let salvage = try Egctl.run("salvage", store, "--output", output, "--json")
        #expect(salvage.status == 0, "\(salvage.stderr)")
        let report = try salvage.json()
        let lost = try #require(report["lost"] as? [[String: Any]])
        #expect(lost.count == 1)
        #expect(lost.first?["byteOffset"] as? Int == Int(victim))
        #expect(report["copiedTransactions"] as? Int == offsets.count - 1)
        // Everything before the damage is there: the salvaged store replays (with anomalies where later
        // transactions touch objects the lost one inserted) and its own frames verify.
        let replay = try Egctl.run("replay", output, "--summary", "--json")
        #expect(replay.status == 0, "\(replay.stderr)")
    }

    @Test(
        "bad input gives one line on stderr and the documented exit status",
        arguments: [
            (["verify", "/nonexistent/store.eglog"], Int32(2), "store.eglog"),
            (["verify", "/tmp"], 2, "directory"),
            (["inspect", "NOT_A_STORE"], 2, "EventGraph log"),
            (["dump", "STORE", "--entity", "Nope"], 2, "no entity named 'Nope'"),
            (["dump", "STORE", "--entity", "Post", "--where", "identity ~ 3"], 2, "--where"),
            (["dump", "STORE", "--entity", "Post", "--where", "nosuch == 3"], 2, "no property named 'nosuch'"),
            (["history", "STORE", "post-42"], 2, "not an object URI"),
            (["replay", "STORE", "--until", "3", "--at", "2026-01-01"], 2, "either --until or --at"),
            (["inspect", "NEWER_VERSION"], 2, "newer"),
        ])
    func badInput(arguments: [String], status: Int32, message: String) throws {
        let scratch = Scratch()
        let (store, _) = try makeStore(scratch, posts: 20)
        let notAStore = scratch.file("notes.txt")
        try Data("hello, this is not a log\n".utf8).write(to: URL(fileURLWithPath: notAStore))
        let newer = scratch.file("newer.eglog")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: store))
        for copy in [0, 512] {
            bytes[copy + 8] = 9  // major version 9
            var header = [UInt8](bytes[copy..<copy + 124])
            let crc = CRC32C.checksum(header)
            header = withUnsafeBytes(of: crc.littleEndian, Array.init)
            bytes.replaceSubrange(copy + 124..<copy + 128, with: header)
        }
        try bytes.write(to: URL(fileURLWithPath: newer))
        let resolved = arguments.map {
            $0 == "STORE" ? store : $0 == "NOT_A_STORE" ? notAStore : $0 == "NEWER_VERSION" ? newer : $0
        }
        let result = try Egctl.run(resolved)
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Backtrace"))
        #expect(result.stdout.isEmpty || !result.stdout.contains("Fatal"))
    }

    @Test("compact refuses while another process writes the store, naming its pid")
    func lockedStore() throws {
        let scratch = Scratch()
        let (store, _) = try makeStore(scratch, posts: 20)
        let writer = try LogWriter(path: store)  // this test process now holds the writer lock
        defer { try? writer.close() }
        let result = try Egctl.run("compact", store)
        #expect(result.status == 1)
        #expect(result.stderr.contains("in use by another process (pid \(getpid()))"), "\(result.stderr)")
        // Read-only commands still work alongside the writer.
        #expect(try Egctl.run("verify", store).status == 0)
    }
}
