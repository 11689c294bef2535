import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Kills savers with SIGKILL at random moments and checks the store after every cycle (see `Docs/Testing.md`).
///
/// A cycle starts a saver on the store, picks where to kill it — while it opens (and recovers what the last kill
/// left), during an explicit compaction, during an automatic checkpoint running beside the saves, or anywhere while
/// it saves — kills it, optionally simulates a power loss on the bytes
/// past the last sync, and runs ``Check``. Each store lives `cyclesPerStore` cycles, so that it keeps a history
/// to recover and compact without growing without bound.
struct Driver {
    var cycleCount: Int
    var seed: UInt64
    var writerCount: Int
    var cyclesPerStore: Int
    var powerLoss: Bool
    var directory: String
    var executablePath: String
    var egctlPath: String

    /// The running totals.
    struct Totals {
        var cycles = 0
        var acknowledgements = 0
        var kills: [KillPhase: Int] = [:]
        var powerLosses: [PowerLoss: Int] = [:]
        var largestStoreEntries = 0
        var storesWithoutModel = 0
    }

    func run() -> Never {
        print(
            "KillNine drive: seed \(seed) (replay with --seed \(seed)), \(cycleCount) cycles, \(writerCount) writers, "
                + "power loss \(powerLoss ? "on" : "off"), store in \(directory)")
        var random = SeededGenerator(seed: seed)
        var totals = Totals()
        // Since the store was created: each writer's last acknowledged sequence, and a bound on their transactions.
        var acknowledged: [Int32: Int64] = [:]
        var acknowledgedTransaction: UInt64 = 0
        var openEstimate = Duration.milliseconds(20)
        var compactionEstimate = Duration.milliseconds(20)
        var checkpointEstimate = Duration.milliseconds(20)
        let start = ContinuousClock.now
        for cycle in 1...cycleCount {
            let store = "\(directory)/store-\((cycle - 1) / cyclesPerStore).eglog"
            if (cycle - 1) % cyclesPerStore == 0 { (acknowledged, acknowledgedTransaction) = ([:], 0) }
            let cycleSeed = random.next()
            var log = "cycle \(cycle) (saver seed \(cycleSeed))"
            do {
                let saver = try SaverProcess(
                    executable: executablePath, store: store, writerCount: writerCount, seed: cycleSeed)
                waitForKillMoment(
                    saver, open: openEstimate, compaction: compactionEstimate, checkpoint: checkpointEstimate,
                    using: &random)
                let (events, unexpectedEnd) = saver.kill()
                if let unexpectedEnd { throw CheckFailure(unexpectedEnd) }
                if let problem = events.problems.first { throw CheckFailure(problem) }
                if let opened = events.openedAt, let ready = events.readyAt { openEstimate = ready - opened }
                if let duration = events.lastCompactionDuration { compactionEstimate = duration }
                if let duration = events.lastCheckpointDuration { checkpointEstimate = duration }
                acknowledged.merge(events.lastAcknowledged, uniquingKeysWith: max)
                acknowledgedTransaction = max(acknowledgedTransaction, events.lastAcknowledgedTransaction)
                totals.acknowledgements += events.acknowledgementCount
                totals.kills[events.phase, default: 0] += 1
                log += ": killed while \(events.phase) after \(events.acknowledgementCount) acknowledged saves"
                guard FileManager.default.fileExists(atPath: store) || !acknowledged.isEmpty else {
                    totals.cycles += 1
                    continue  // killed before the store was created
                }
                if powerLoss, let mode = PowerLoss.allCases.randomElement(using: &random) {
                    log +=
                        "; "
                        + (try mode.apply(
                            to: store, acknowledgedThrough: acknowledgedTransaction, using: &random))
                    totals.powerLosses[mode, default: 0] += 1
                }
                switch try Check(storePath: store, egctlPath: egctlPath).run(acknowledged: acknowledged) {
                case .checked(let entryCount): totals.largestStoreEntries = max(totals.largestStoreEntries, entryCount)
                case .noModelYet: totals.storesWithoutModel += 1
                }
                totals.cycles += 1
                if ProcessInfo.processInfo.environment["KILLNINE_VERBOSE"] != nil { print(log) }
            } catch {
                print("KillNine drive: FAILED in \(log): \(error)")
                print("KillNine drive: the store is kept in \(directory); replay the choices with --seed \(seed)")
                report(totals, since: start)
                exit(1)
            }
        }
        report(totals, since: start)
        try? FileManager.default.removeItem(atPath: directory)
        exit(0)
    }

    /// Waits until the moment this cycle kills at: during open, during an explicit compaction, during an automatic
    /// checkpoint, or at a random time.
    private func waitForKillMoment(
        _ saver: SaverProcess, open: Duration, compaction: Duration, checkpoint: Duration,
        using random: inout SeededGenerator
    ) {
        _ = saver.wait(upTo: .seconds(10)) { $0.openedAt != nil }
        let choice = Int.random(in: 0..<20, using: &random)
        let delay: Duration
        switch choice {
        case 0..<4:
            // While the store opens: replay, recovery of the torn tail the last kill left, the schema append.
            delay = .microseconds(Int64.random(in: 0...max(1, open.microseconds * 5 / 4), using: &random))
        case 4..<7:
            // While an explicit compaction runs (not while it waits for an automatic checkpoint to finish).
            _ = saver.wait(upTo: .seconds(3)) { $0.phase == .compaction }
            delay = .microseconds(Int64.random(in: 0...max(1, compaction.microseconds), using: &random))
        case 7..<11:
            // While an automatic checkpoint runs beside the saves (each saver's threshold is a few dozen saves).
            _ = saver.wait(upTo: .seconds(3)) { $0.phase == .checkpoint }
            delay = .microseconds(Int64.random(in: 0...max(1, checkpoint.microseconds), using: &random))
        default:
            delay = .microseconds(Int64.random(in: 0...1_000_000, using: &random))
        }
        usleep(UInt32(delay.microseconds))
    }

    private func report(_ totals: Totals, since start: ContinuousClock.Instant) {
        let kills = KillPhase.allCases.map { "\($0.rawValue) \(totals.kills[$0] ?? 0)" }.joined(separator: ", ")
        let losses = PowerLoss.allCases.map { "\($0.rawValue) \(totals.powerLosses[$0] ?? 0)" }.joined(separator: ", ")
        print(
            "KillNine drive: \(totals.cycles) cycles passed, \(totals.acknowledgements) acknowledged saves, kills "
                + "(\(kills)), power losses (\(losses)), largest store \(totals.largestStoreEntries) entries, "
                + "\(totals.storesWithoutModel) kills between creating a store and recording its model, "
                + "\((ContinuousClock.now - start).components.seconds) s")
    }
}

extension Duration {
    var microseconds: Int64 { components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000 }
}
