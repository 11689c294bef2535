import Foundation
import Testing

@testable import LogFormat

/// Hostile files built byte by byte (checksums forged with the file's UUID, as anyone can), handed to every egctl
/// command and to the library's open in child processes: each must answer clearly — never trap — within its memory
/// bound, and `egctl verify` and the library must agree on whether the file is a store they accept.
@Suite("Crafted files: every tool and the library answer clearly within their memory bounds")
struct CraftedFileTests {
    /// A crafted file and what the tools must make of it.
    struct Case: CustomStringConvertible, Sendable {
        var name: String
        /// Whether `egctl verify` (exit 0) and the library's open accept the file.
        var accepted: Bool
        /// What the library says when asked to insert and save into it (accepted files only).
        var afterInsert: String?
        var build: @Sendable () throws -> CraftedLog
        var description: String { name }
    }

    /// The peak resident memory every egctl command and the library's open must stay under, on every case.
    static let memoryBound = 100_000_000

    static let zeros = [UInt8](repeating: 0, count: LogLimits.maxFrameRawByteCount)

    static let cases: [Case] = [
        Case(name: "a header with baseSequence 0", accepted: false) {
            var log = CraftedLog(header: LogFileHeader(storeUUID: .random(), baseSequence: 0))
            try log.appendSchema()
            try log.appendTransaction(CraftedLog.insert(transactionID: 1, key: 1, nextKey: 2))
            try log.appendSeal()
            return log
        },
        Case(name: "a header with headerByteCount 2³²−1", accepted: false) {
            var log = CraftedLog()
            try log.appendSchema()
            log.forgeHeaderField(at: 12, [0xFF, 0xFF, 0xFF, 0xFF])
            return log
        },
        Case(name: "frames numbered up to 2⁶⁴−1", accepted: true, afterInsert: "every frame sequence number") {
            var log = CraftedLog(header: LogFileHeader(storeUUID: .random(), baseSequence: UInt64.max - 2))
            try log.appendSchema()
            try log.appendTransaction(CraftedLog.insert(transactionID: 1, key: 1, nextKey: 2))
            try log.appendSeal()  // numbered 2⁶⁴−1
            return log
        },
        Case(name: "transaction ID 2⁶⁴−1", accepted: true, afterInsert: "the store is full") {
            var log = CraftedLog()
            try log.appendSchema()
            try log.appendTransaction(CraftedLog.insert(transactionID: UInt64.max, key: 1, nextKey: 2))
            try log.appendSeal()
            return log
        },
        Case(name: "nextKey 2⁶⁴−1", accepted: true, afterInsert: "the store is full") {
            var log = CraftedLog()
            try log.appendSchema()
            try log.appendTransaction(CraftedLog.insert(transactionID: 1, key: 1, nextKey: UInt64.max))
            try log.appendSeal()
            return log
        },
        Case(name: "64 fragments of 16 MiB of zeros (a 1 GiB transaction)", accepted: false) {
            var log = CraftedLog()
            try log.appendSchema()
            try log.appendFragments(transactionID: 1, count: 64, first: zeros, fragment: zeros)
            try log.appendSeal()
            return log
        },
        Case(name: "a checkpoint chunk of 64 fragments of 16 MiB of zeros (1 GiB)", accepted: false) {
            var log = CraftedLog()
            try log.appendSchema()
            try log.appendCheckpoint(chunkFragmentCount: 64, fragment: zeros)
            try log.appendSeal()
            return log
        },
        Case(name: "a valid changeset header followed by 1 GiB of zeros", accepted: false) {
            var log = CraftedLog()
            try log.appendSchema()
            // An empty changeset, then zeros to the end of the first fragment: the payload is 1 GiB long.
            let header = try Changeset(
                transactionID: 1, commitTimeMicroseconds: 0, author: "", nextKey: 1, operations: []
            ).encoded()
            let first = header + zeros.prefix(zeros.count - header.count)
            try log.appendFragments(transactionID: 1, count: 64, first: first, fragment: zeros)
            try log.appendSeal()
            return log
        },
    ]

    /// Runs a program, expecting an exit (not a signal) and a peak resident size under the bound.
    @discardableResult
    func expectClearAnswer(_ executable: String, _ arguments: [String], _ crafted: Case) throws
        -> MeasuredProcess.Result
    {
        let result = try MeasuredProcess.run(executable, arguments)
        let command = ([URL(fileURLWithPath: executable).lastPathComponent] + arguments.filter { !$0.hasPrefix("/") })
            .joined(separator: " ")
        #expect(result.exitStatus != nil, "\(command) on \(crafted) trapped: \(result)")
        #expect(
            result.peakResidentBytes < Self.memoryBound,
            "\(command) on \(crafted) peaked at \(result.peakResidentBytes) bytes")
        let end = result.exitStatus.map { "exit \($0)" } ?? "signal \(result.signal ?? 0)"
        print("crafted file \"\(crafted)\": \(command) → \(end), peak \(result.peakResidentBytes / 1_000_000) MB")
        return result
    }

    @Test("egctl and the library on a crafted file", arguments: cases)
    func everyTool(crafted: Case) throws {
        let scratch = Scratch()
        let path = scratch.file("crafted.eglog")
        try crafted.build().write(to: path)
        let egctl = Egctl.executable.path

        let verify = try expectClearAnswer(egctl, ["verify", path], crafted)
        #expect((verify.exitStatus == 0) == crafted.accepted, "verify: \(verify)")
        for arguments in [
            ["verify", path, "--json"], ["inspect", path], ["inspect", path, "--json"], ["replay", path],
            ["replay", path, "--changesets"], ["dump", path, "--entity", "Item"],
            ["history", path, "eventgraph:///Item/1"], ["salvage", path, "--output", scratch.file("salvaged.eglog")],
        ] {
            try expectClearAnswer(egctl, arguments, crafted)
        }
        // Writers change the file (a torn tail is cut off): each gets its own copy.
        func copy(_ name: String) throws -> String {
            try FileManager.default.copyItem(atPath: path, toPath: scratch.file(name))
            return scratch.file(name)
        }
        try expectClearAnswer(egctl, ["compact", try copy("compacted.eglog")], crafted)

        let open = try expectClearAnswer(MeasuredProcess.probe, ["open", try copy("opened.eglog")], crafted)
        #expect((open.exitStatus == 0) == crafted.accepted, "egctl verify and the library disagree: \(open)")
        if crafted.accepted {
            // One engine: the library's digest of the file is egctl's.
            let replay = try Egctl.run("replay", path, "--summary", "--json")
            let digest = try #require(try replay.json()["stateDigest"] as? String)
            #expect(open.stdout.contains("state-digest \(digest)"), "library: \(open.stdout), egctl: \(digest)")
        }
        if let afterInsert = crafted.afterInsert {
            let insert = try expectClearAnswer(
                MeasuredProcess.probe, ["open-insert", try copy("inserted.eglog")], crafted)
            #expect(insert.exitStatus == 1)
            #expect(insert.stdout.contains(afterInsert), "\(insert)")
        }
    }
}
