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

    /// How far above its baseline (``baselines``) a command's peak resident memory may go on a crafted file: eight
    /// of the largest frames a reader holds decoded (16 MiB each: a fragment's raw bytes, on the scanning thread and
    /// on the one that decodes aside, and glibc keeps a freed block of that size resident in the arena of each
    /// thread that used one, so how many stay depends on which threads ran, and with it on the machine's load).
    /// The hostile sizes of the cases are 1 GiB and more, eight times this: an allocation proportional to one of
    /// them, touched, goes past it. (Before, the bound was an absolute 100 MB, which the runtime, Foundation and the
    /// debug binaries take a quarter of, and which peaks of 85–93 MB came close to.)
    static let headroomByteCount = 8 * LogLimits.maxFrameRawByteCount

    /// The arguments of every command run on each crafted file (PATH: the file or a copy of it; OUT: a new file),
    /// by executable: egctl's, then StoreProbe's (the library).
    static let egctlCommands: [[String]] = [
        ["verify", "PATH"], ["verify", "PATH", "--json"], ["inspect", "PATH"], ["inspect", "PATH", "--json"],
        ["replay", "PATH"], ["replay", "PATH", "--changesets"], ["dump", "PATH", "--entity", "Item"],
        ["history", "PATH", "eventgraph:///Item/1"], ["salvage", "PATH", "--output", "OUT"], ["compact", "PATH"],
    ]
    static let probeCommands: [[String]] = [["open", "PATH"], ["open-insert", "PATH"]]

    /// The peak resident memory of each command (keyed by ``key(_:_:)``) on a small valid store, measured once per
    /// test run on this machine and build: what the runtime, Foundation and the binary take (≈ 25–40 MB in a debug
    /// build), to which ``headroomByteCount`` is added.
    static let baselines: [String: Int] = {
        let scratch = Scratch()
        var log = CraftedLog()
        var baselines: [String: Int] = [:]
        do {
            try log.appendSchema()
            try log.appendTransaction(CraftedLog.insert(transactionID: 1, key: 1, nextKey: 2))
            try log.appendSeal()
            for (executable, commands) in [
                (Egctl.executable.path, egctlCommands), (MeasuredProcess.probe, probeCommands),
            ] {
                for (index, command) in commands.enumerated() {
                    let path = scratch.file("\(index)-\(command[0]).eglog")
                    try log.write(to: path)
                    let arguments = command.map { $0 == "PATH" ? path : $0 == "OUT" ? path + ".out" : $0 }
                    let result = try MeasuredProcess.run(executable, arguments)
                    #expect(result.exitStatus == 0, "\(key(executable, command)) on a valid store: \(result)")
                    baselines[key(executable, command)] = result.peakResidentBytes
                }
            }
        } catch {
            Issue.record("measuring the baselines: \(error)")
        }
        return baselines
    }()

    /// A command as printed: the executable's name and its arguments without paths.
    static func key(_ executable: String, _ command: [String]) -> String {
        ([URL(fileURLWithPath: executable).lastPathComponent] + command.filter { $0 != "PATH" && $0 != "OUT" })
            .joined(separator: " ")
    }

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

    /// Runs a command (``egctlCommands``, ``probeCommands``) on `path`, expecting an exit (not a signal) and a peak
    /// resident size under the command's baseline plus ``headroomByteCount``.
    @discardableResult
    func expectClearAnswer(_ executable: String, _ command: [String], path: String, output: String, _ crafted: Case)
        throws -> MeasuredProcess.Result
    {
        let arguments = command.map { $0 == "PATH" ? path : $0 == "OUT" ? output : $0 }
        let result = try MeasuredProcess.run(executable, arguments)
        let key = Self.key(executable, command)
        let baseline = try #require(Self.baselines[key], "no baseline for \(key)")
        #expect(result.exitStatus != nil, "\(key) on \(crafted) trapped: \(result)")
        #expect(
            result.peakResidentBytes < baseline + Self.headroomByteCount,
            "\(key) on \(crafted) peaked at \(result.peakResidentBytes) bytes, \(baseline) on a valid store")
        let end = result.exitStatus.map { "exit \($0)" } ?? "signal \(result.signal ?? 0)"
        print(
            "crafted file \"\(crafted)\": \(key) → \(end), peak \(result.peakResidentBytes / 1_000_000) MB "
                + "(\(baseline / 1_000_000) MB on a valid store)")
        return result
    }

    @Test("egctl and the library on a crafted file", arguments: cases)
    func everyTool(crafted: Case) throws {
        let scratch = Scratch()
        let path = scratch.file("crafted.eglog")
        try crafted.build().write(to: path)
        let egctl = Egctl.executable.path
        let salvaged = scratch.file("salvaged.eglog")
        // Writers change the file (a torn tail is cut off): each gets its own copy.
        func copy(_ name: String) throws -> String {
            try FileManager.default.copyItem(atPath: path, toPath: scratch.file(name))
            return scratch.file(name)
        }

        for command in Self.egctlCommands {
            let target = command[0] == "compact" ? try copy("compacted.eglog") : path
            let result = try expectClearAnswer(egctl, command, path: target, output: salvaged, crafted)
            if command == ["verify", "PATH"] {
                #expect((result.exitStatus == 0) == crafted.accepted, "verify: \(result)")
            }
        }

        let open = try expectClearAnswer(
            MeasuredProcess.probe, ["open", "PATH"], path: try copy("opened.eglog"), output: "", crafted)
        #expect((open.exitStatus == 0) == crafted.accepted, "egctl verify and the library disagree: \(open)")
        if crafted.accepted {
            // One engine: the library's digest of the file is egctl's.
            let replay = try Egctl.run("replay", path, "--summary", "--json")
            let digest = try #require(try replay.json()["stateDigest"] as? String)
            #expect(open.stdout.contains("state-digest \(digest)"), "library: \(open.stdout), egctl: \(digest)")
        }
        if let afterInsert = crafted.afterInsert {
            let insert = try expectClearAnswer(
                MeasuredProcess.probe, ["open-insert", "PATH"], path: try copy("inserted.eglog"), output: "",
                crafted)
            #expect(insert.exitStatus == 1)
            #expect(insert.stdout.contains(afterInsert), "\(insert)")
        }
    }
}
