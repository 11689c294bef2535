import Foundation
import Testing

/// A demo store of `posts` posts and 300 title updates in `scratch`.
private func demoStore(in scratch: Scratch, posts: Int, seed: Int) throws -> String {
    let store = scratch.file("blog.eglog")
    let demo = try Egctl.run("demo", store, "--posts", "\(posts)", "--updates", "300", "--seed", "\(seed)")
    try #require(demo.status == 0, "\(demo.stderr)")
    return store
}

/// A `replay --summary --json` output without its timings, comparable from run to run.
private func comparableSummary(_ stdout: String) throws -> NSDictionary {
    var json = try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any])
    json["seconds"] = nil
    json["megabytesPerSecond"] = nil
    return NSDictionary(dictionary: json)
}

@Suite("egctl's decoding thread faults in the heap the replaying thread fills next, with the same results")
struct EgctlHeapPrefaultTests {
    /// Runs `arguments` with every transaction decoded aside and prefaulting on or off; returns stdout, the page
    /// faults egctl reports for its replaying thread and the bytes it reports its decoding thread populated.
    private func run(_ arguments: [String], prefaulting: Bool) throws -> (stdout: String, faults: Int, populated: Int) {
        let result = try Egctl.run(
            arguments,
            environment: [
                "EGCTL_DECODE_ASIDE_BYTES": "0", "EGCTL_REPORT_REPLAY": "1",
                "EGCTL_PREFAULT_STORE_BYTES": prefaulting ? "0" : "\(UInt64.max)",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        let line = try #require(
            result.stderr.split(separator: "\n").first { $0.hasPrefix("egctl: the replaying thread took ") })
        let words = line.split(separator: " ")
        let faults = try #require(Int(words[5]), "\(line)")
        let populated = try #require(
            words.firstIndex(of: "populated").flatMap { $0 + 1 < words.count ? Int(words[$0 + 1]) : nil }, "\(line)")
        #expect(prefaulting || populated == 0, "\(line)")
        return (result.stdout, faults, populated)
    }

    @Test("a prefaulted replay has the same summaries and changesets, and its replaying thread takes fewer faults")
    func prefaultingChangesOnlyWhoFaults() throws {
        let scratch = Scratch()
        let store = try demoStore(in: scratch, posts: 6000, seed: 3)

        let whole = ["replay", store, "--summary", "--json"]
        let prefaulted = try run(whole, prefaulting: true)
        let faulted = try run(whole, prefaulting: false)
        #expect(try comparableSummary(prefaulted.stdout) == comparableSummary(faulted.stdout))
        // Before: the replaying thread faulted in all of the state (≈ 2,000 faults here in a debug build, ≈ 600 with
        // the prefaulter). The decoding thread populates most of it ahead; what is left is the state's allocations
        // before the heap first grew by its pad, and those of large blocks the heap maps on their own.
        // Where the kernel refuses `MADV_POPULATE_WRITE` (before Linux 5.14, or a sandbox that filters `madvise`),
        // nothing was populated and there is nothing to compare. The head start is populated before each
        // transaction's decoding ends (before the replaying thread applies it), so a loaded machine that delays
        // the decoding thread delays the replay with it and does not change the counts.
        print(
            "replaying thread's page faults: \(prefaulted.faults) prefaulted (\(prefaulted.populated) bytes populated), "
                + "\(faulted.faults) not")
        if prefaulted.populated == 0 {
            print("note: the kernel populated nothing ahead (MADV_POPULATE_WRITE refused): faults not compared")
        } else {
            #expect(prefaulted.faults * 2 < faulted.faults, "\(prefaulted.faults) against \(faulted.faults)")
        }

        let last = try #require(try comparableSummary(faulted.stdout)["lastTransactionID"] as? Int)
        let until = ["replay", store, "--summary", "--json", "--until", "\(last / 2)"]
        #expect(
            try comparableSummary(run(until, prefaulting: true).stdout)
                == comparableSummary(run(until, prefaulting: false).stdout))
        let changesets = ["replay", store, "--changesets", "--json", "--from", "\(last - 20)"]
        #expect(try run(changesets, prefaulting: true).stdout == run(changesets, prefaulting: false).stdout)
    }
}

@Suite("egctl decodes transactions several ahead of the one it applies, within bounds, with the same results")
struct EgctlDecodingWindowTests {
    @Test("the decoding runs up to 64 transactions ahead, and summaries up to each point agree with inline decoding")
    func decodingRunsAheadWithinItsBounds() throws {
        let scratch = Scratch()
        let store = try demoStore(in: scratch, posts: 1500, seed: 4)
        func replay(_ arguments: [String], aside: Bool) throws -> (summary: NSDictionary, waiting: Int) {
            let result = try Egctl.run(
                arguments + ["--summary", "--json"],
                environment: ["EGCTL_DECODE_ASIDE_BYTES": aside ? "0" : "\(Int.max)", "EGCTL_REPORT_REPLAY": "1"])
            #expect(result.status == 0, "\(result.stderr)")
            let prefix = "egctl: transactions waiting to be applied: at most "
            let line = try #require(result.stderr.split(separator: "\n").first { $0.hasPrefix(prefix) })
            return (try comparableSummary(result.stdout), try #require(Int(line.dropFirst(prefix.count))))
        }
        let whole = try replay(["replay", store], aside: true)
        let last = try #require(whole.summary["lastTransactionID"] as? Int)
        try #require(last > 80, "the demo store has \(last) transactions")
        // Before: one transaction was decoded while the one before it was applied (at most 1 waiting).
        #expect(whole.waiting == 65)
        #expect(try whole.summary == replay(["replay", store], aside: false).summary)
        for until in [1, 2, 40, 70, last - 1] {
            let arguments = ["replay", store, "--until", "\(until)"]
            let aside = try replay(arguments, aside: true)
            #expect(try aside.summary == replay(arguments, aside: false).summary, "--until \(until)")
            #expect(aside.summary["lastTransactionID"] as? Int == until)
        }
    }
}
