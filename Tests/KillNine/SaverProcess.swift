import Foundation
import LogFormat

#if canImport(Glibc)
    import Glibc
#endif

/// What a saver reported on stdout, parsed as the lines arrive.
struct SaverEvents: Sendable {
    /// The highest acknowledged sequence of each writer.
    var lastAcknowledged: [Int32: Int64] = [:]
    /// The highest transaction ID printed with an acknowledgement (a bound on the acknowledged transactions).
    var lastAcknowledgedTransaction: UInt64 = 0
    var acknowledgementCount = 0
    var openedAt: ContinuousClock.Instant?
    var readyAt: ContinuousClock.Instant?
    var compactionsBegun = 0
    var compactionsEnded = 0
    var compactionBegunAt: ContinuousClock.Instant?
    var lastCompactionDuration: Duration?
    var checkpointsBegun = 0
    var checkpointsEnded = 0
    var checkpointBegunAt: ContinuousClock.Instant?
    var lastCheckpointDuration: Duration?
    /// Lines that are not in the protocol, or acknowledgements whose values differ from the ledger's.
    var problems: [String] = []
    var isClosed = false

    /// Where the saver was when it died: still opening, inside an automatic checkpoint, inside an explicit
    /// compaction, or saving. The two kinds of compaction take turns (one lock), and each prints its begin before it
    /// waits for the lock: when both have begun and neither ended, the one that began first is the one running (with
    /// a threshold of a few dozen saves a checkpoint has nearly always begun, so counting every such kill as the
    /// checkpoint's left the explicit compactions' kills at 0).
    var phase: KillPhase {
        if readyAt == nil { return .open }
        switch (checkpointsBegun > checkpointsEnded, compactionsBegun > compactionsEnded) {
        case (true, true):
            guard let checkpointBegunAt, let compactionBegunAt else { return .checkpoint }
            return compactionBegunAt < checkpointBegunAt ? .compaction : .checkpoint
        case (true, false): return .checkpoint
        case (false, true): return .compaction
        case (false, false): return .saving
        }
    }

    mutating func parse(_ line: Substring) {
        let now = ContinuousClock.now
        let fields = line.split(separator: " ")
        switch fields.first {
        case "open": openedAt = now
        case "ready": readyAt = now
        case "compact-begin":
            compactionsBegun += 1
            compactionBegunAt = now
        case "compact-end":
            compactionsEnded += 1
            if let begun = compactionBegunAt { lastCompactionDuration = now - begun }
        case "checkpoint-begin":
            checkpointsBegun += 1
            checkpointBegunAt = now
        case "checkpoint-end" where fields.count == 2:
            checkpointsEnded += 1
            if let begun = checkpointBegunAt { lastCheckpointDuration = now - begun }
        case "ack" where fields.count == 5:
            guard let writer = Int32(fields[1]), let sequence = Int64(fields[2]), let transaction = UInt64(fields[3]),
                let fingerprint = UInt64(fields[4])
            else {
                problems.append("unreadable line: \(line)")
                return
            }
            if fingerprint != Ledger.fingerprint(writer: writer, sequence: sequence) {
                problems.append("writer \(writer) acknowledged entry \(sequence) with values the ledger does not give")
            }
            if let last = lastAcknowledged[writer], sequence != last + 1 {
                problems.append("writer \(writer) acknowledged entry \(sequence) after \(last)")
            }
            lastAcknowledged[writer] = sequence
            lastAcknowledgedTransaction = max(lastAcknowledgedTransaction, transaction)
            acknowledgementCount += 1
        default:
            problems.append("unexpected line: \(line)")
        }
    }
}

/// Where a saver was killed.
enum KillPhase: String, CaseIterable, Sendable {
    case open, saving, compaction
    /// An automatic checkpoint, on its own thread beside the saves.
    case checkpoint = "automatic checkpoint"
}

/// A running `KillNine save` process and the events it has printed so far.
final class SaverProcess {
    private let process: Process
    private let events = LockedValue(SaverEvents())
    /// Signalled after every line (and at the end of output), so that waiting for an event is a condition.
    private let arrived = DispatchSemaphore(value: 0)
    private let errors: Pipe

    init(executable: String, store: String, writerCount: Int, seed: UInt64) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["save", "--store", store, "--writers", "\(writerCount)", "--seed", "\(seed)"]
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        let output = Pipe()
        errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let reading = output.fileHandleForReading
        let thread = Thread { [events, arrived] in
            var pending: [UInt8] = []
            while true {
                let data = reading.availableData
                if data.isEmpty { break }
                pending.append(contentsOf: data)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    events.withLock { $0.parse(Substring(line)) }
                    arrived.signal()
                }
            }
            events.withLock { $0.isClosed = true }
            arrived.signal()
        }
        thread.start()
    }

    /// A copy of the events so far.
    var snapshot: SaverEvents { events.withLock { $0 } }

    /// Waits until `condition` holds for the events (or the output ends, or `timeout` passes); returns whether it holds.
    func wait(upTo timeout: Duration, until condition: (SaverEvents) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            let current = snapshot
            if condition(current) { return true }
            if current.isClosed { return false }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            let (seconds, attoseconds) = left.components
            _ = arrived.wait(
                timeout: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
        }
    }

    /// Kills the saver with SIGKILL and waits for it; returns its events, or a description of how it died otherwise.
    func kill() -> (events: SaverEvents, unexpectedEnd: String?) {
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        _ = wait(upTo: .seconds(30)) { $0.isClosed }
        let killed = process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let unexpected =
            killed
            ? nil
            : "the saver ended by itself (\(process.terminationReason == .exit ? "exit" : "signal") "
                + "\(process.terminationStatus)) before the kill: \(stderr)"
        return (snapshot, unexpected)
    }
}
