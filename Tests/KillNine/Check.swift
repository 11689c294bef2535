import EventGraph
import Foundation
import LogFormat

/// The checks after every cycle, on the store as the kill (and the simulated power loss) left it.
struct Check {
    var storePath: String
    var egctlPath: String

    /// What a check found.
    enum Outcome {
        /// The store holds this many entries, all as they must be.
        case checked(entryCount: Int)
        /// The saver was killed after creating the file and before appending the model: egctl calls it intact and
        /// empty, but the library's read-only view refuses it ("the log records no model"; see `Docs/Testing.md`).
        case noModelYet
    }

    /// Checks the store, or throws a ``CheckFailure`` saying what is wrong.
    ///
    /// - Parameter acknowledged: the highest acknowledged sequence of each writer since the store was created.
    func run(acknowledged: [Int32: Int64]) throws -> Outcome {
        let verify = try runEgctl(["verify", storePath])
        guard verify.status == 0 else {
            throw CheckFailure("egctl verify exited \(verify.status): \(verify.output)\(verify.messages)")
        }
        let replay = try runEgctl(["replay", storePath, "--summary", "--json"])
        guard replay.status == 0,
            let object = try? JSONSerialization.jsonObject(with: Data(replay.output.utf8)) as? [String: Any],
            let digest = object["stateDigest"] as? String,
            let lastTransactionID = (object["lastTransactionID"] as? NSNumber)?.uint64Value
        else {
            throw CheckFailure("egctl replay --summary exited \(replay.status): \(replay.output)\(replay.messages)")
        }
        if acknowledged.isEmpty, try LogReader(path: storePath).scan().frameCount == 0 { return .noModelYet }
        // The library's read-only view of the latest state: no lock, never modifies the file, so the torn tail
        // stays for the next saver's recovery (which the next kill may interrupt).
        let view = try ModelContainer.view(path: storePath, asOfTransaction: lastTransactionID, model: Ledger.model)
        let libraryDigest = try view.stateDigest()
        guard libraryDigest.description == digest else {
            throw CheckFailure("the library's state digest \(libraryDigest) differs from egctl's \(digest)")
        }
        let context = view.newBackgroundContext(name: "check")
        let entries = try context.fetch(FetchDescriptor<Entry>())
        let tallies = try context.fetch(FetchDescriptor<Tally>())
        try checkLedger(entries: entries, tallies: tallies, acknowledged: acknowledged)
        return .checked(entryCount: entries.count)
    }

    /// Each writer's entries are exactly 1...n with the ledger's values, linked both ways, with n at least its last
    /// acknowledged sequence and equal to its tally (an entry and its tally are saved in one transaction).
    private func checkLedger(entries: [Entry], tallies: [Tally], acknowledged: [Int32: Int64]) throws {
        let byWriter = Dictionary(grouping: entries, by: \.writer)
        let tallyByWriter = Dictionary(tallies.map { ($0.writer, $0.lastSequence) }, uniquingKeysWith: max)
        for (writer, last) in acknowledged where (byWriter[writer]?.count ?? 0) < last {
            throw CheckFailure(
                "writer \(writer) acknowledged entry \(last) but the store has \(byWriter[writer]?.count ?? 0) entries")
        }
        for (writer, entries) in byWriter {
            let sorted = entries.sorted { $0.sequence < $1.sequence }
            for (index, entry) in sorted.enumerated() {
                let sequence = Int64(index + 1)
                guard entry.sequence == sequence else {
                    throw CheckFailure("writer \(writer)'s entries have a hole: entry \(sequence) is missing")
                }
                try checkValues(of: entry, writer: writer)
                guard entry.previous?.sequence == (index == 0 ? nil : sequence - 1),
                    entry.next?.sequence == (index == sorted.count - 1 ? nil : sequence + 1)
                else {
                    throw CheckFailure(
                        "writer \(writer)'s entry \(sequence) is linked to \(entry.previous?.sequence ?? 0) and "
                            + "\(entry.next?.sequence ?? 0)")
                }
            }
            guard tallyByWriter[writer] == Int64(sorted.count) else {
                throw CheckFailure(
                    "writer \(writer) has \(sorted.count) entries but its tally says \(tallyByWriter[writer] ?? 0)")
            }
        }
    }

    private func checkValues(of entry: Entry, writer: Int32) throws {
        let sequence = entry.sequence
        guard entry.key == Ledger.key(writer: writer, sequence: sequence),
            entry.text == Ledger.text(writer: writer, sequence: sequence),
            entry.payload == Ledger.payload(writer: writer, sequence: sequence)
        else {
            throw CheckFailure("writer \(writer)'s entry \(sequence) does not hold the values that were saved")
        }
    }

    private func runEgctl(_ arguments: [String]) throws -> (status: Int32, output: String, messages: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: egctlPath)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Read before waiting so that a large output cannot fill the pipe and block egctl (stderr is a line or two).
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let messages = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: data, as: UTF8.self), String(decoding: messages, as: UTF8.self)
        )
    }
}

/// A check that did not hold, in a sentence.
struct CheckFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
