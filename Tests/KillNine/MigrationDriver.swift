import EventGraph
import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Version 2 of the ledger model, the target of `KillNine migrate`: an entry's `text` renamed `body` (recorded as its
/// original name, so `egctl migrate` infers the rename) and a `note` added with a default.
enum LedgerV2 {
    final class Entry: ManagedObject {
        override class var entityName: String { "Entry" }
        @Attribute(.unique) var key: Int64 = 0
        @Attribute var writer: Int32 = 0
        @Attribute var sequence: Int64 = 0
        @Attribute(.originalName("text")) var body: String = ""
        @Attribute(.externalStorage(threshold: 4096)) var payload: Data? = nil
        @Attribute var note: String = "migrated"
        @Relationship(inverse: "next") var previous: Entry?
        @Relationship var next: Entry?
    }

    final class Tally: ManagedObject {
        override class var entityName: String { "Tally" }
        @Attribute(.unique) var writer: Int32 = 0
        @Attribute var lastSequence: Int64 = 0
    }

    static let model = try! ObjectModel(name: "KillNine", version: "2", types: [Entry.self, Tally.self])
}

/// `KillNine migrate`: kills `egctl migrate` with SIGKILL at random moments and checks after every kill that the
/// store opens either with the old model and its old state, or with the new model and the complete migrated state —
/// never neither (see `Docs/Testing.md`).
///
/// One version 1 ledger store is written once; every cycle migrates a fresh copy of it, so each kill lands on a
/// pristine store at a random moment of the migration (reading, writing the new log, syncing, verifying, linking
/// the backup, renaming). After a kill that left the old store, the migration is run again in process: the
/// leftovers of the killed one must not stop it.
struct MigrationDriver {
    var cycleCount: Int
    var seed: UInt64
    var entryCount: Int
    var directory: String
    var egctlPath: String

    func run() -> Never {
        print(
            "KillNine migrate: seed \(seed) (replay with --seed \(seed)), \(cycleCount) cycles, \(entryCount) entries, "
                + "stores in \(directory)")
        do {
            let expected = try prepare()
            var random = SeededGenerator(seed: seed)
            var outcomes: [String: Int] = [:]
            for cycle in 1...cycleCount {
                let delay = Int64.random(in: 0...max(1, expected.migrationMicroseconds * 5 / 4), using: &random)
                let outcome = try runCycle(cycle, killingAfterMicroseconds: delay, expected: expected)
                outcomes[outcome, default: 0] += 1
            }
            let summary = outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            print("KillNine migrate: \(cycleCount) cycles passed (\(summary))")
            try? FileManager.default.removeItem(atPath: directory)
            exit(0)
        } catch {
            print("KillNine migrate: FAILED: \(error)")
            print("KillNine migrate: the stores are kept in \(directory); replay the choices with --seed \(seed)")
            exit(1)
        }
    }

    /// What every cycle compares against.
    struct Expected {
        var oldDigest: StateDigest
        var newDigest: StateDigest
        var lastTransactionID: UInt64
        var migrationMicroseconds: Int64
    }

    private var sourcePath: String { directory + "/source-v1.eglog" }
    private var targetPath: String { directory + "/empty-v2.eglog" }

    /// Writes the version 1 store and an empty version 2 store, and measures one complete migration.
    private func prepare() throws -> Expected {
        let container = try ModelContainer(path: sourcePath, model: Ledger.model)
        let context = container.newBackgroundContext(name: "ledger")
        var previous: Entry?
        for sequence in 1...Int64(entryCount) {
            let entry = Entry()
            context.insert(entry)
            entry.key = Ledger.key(writer: 1, sequence: sequence)
            entry.writer = 1
            entry.sequence = sequence
            entry.text = Ledger.text(writer: 1, sequence: sequence)
            entry.payload = Ledger.payload(writer: 1, sequence: sequence)
            entry.previous = previous
            previous = entry
            try context.save()
        }
        let oldDigest = try container.stateDigest()
        let last = container.lastTransactionID
        try container.close()
        try ModelContainer(path: targetPath, model: LedgerV2.model).close()
        // The state a migration must produce, from the library's own migration of another copy (a migration that
        // keeps history streams the log and does not build the state; the store computes its digest on open).
        let reference = directory + "/reference.eglog"
        try copy(sourcePath, to: reference)
        try StoreMigration.migrate(path: reference, to: LedgerV2.model)
        let newDigest = try ModelContainer.view(path: reference, model: LedgerV2.model).stateDigest()
        let trial = directory + "/trial.eglog"
        try copy(sourcePath, to: trial)
        let started = ContinuousClock.now
        let status = try migrateWithEgctl(trial, killingAfterMicroseconds: nil)
        guard status == 0 else { throw CheckFailure("egctl migrate of an untouched copy exited with \(status)") }
        let elapsed = (ContinuousClock.now - started).microseconds
        try check(
            trial,
            expected: Expected(
                oldDigest: oldDigest, newDigest: newDigest, lastTransactionID: last, migrationMicroseconds: elapsed),
            mustBeNew: true)
        return Expected(
            oldDigest: oldDigest, newDigest: newDigest, lastTransactionID: last, migrationMicroseconds: elapsed)
    }

    /// Migrates a fresh copy, kills the migration after `delay` µs, and checks the store. Returns what was found.
    private func runCycle(_ cycle: Int, killingAfterMicroseconds delay: Int64, expected: Expected) throws -> String {
        let store = directory + "/cycle.eglog"
        for leftover in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        where leftover.hasPrefix("cycle.eglog") {
            try FileManager.default.removeItem(atPath: directory + "/" + leftover)
        }
        try copy(sourcePath, to: store)
        let status = try migrateWithEgctl(store, killingAfterMicroseconds: delay)
        let context = "cycle \(cycle) (killed after \(delay) µs, egctl status \(status))"
        do {
            let found = try check(store, expected: expected, mustBeNew: status == 0)
            if ProcessInfo.processInfo.environment["KILLNINE_VERBOSE"] != nil { print("\(context): \(found)") }
            guard found == "old" else { return status == 0 ? "completed" : "killed-after-swap" }
            // The killed migration's leftovers (a temporary log, a lock) must not stop the next one.
            try StoreMigration.migrate(path: store, to: LedgerV2.model)
            _ = try check(store, expected: expected, mustBeNew: true)
            return "killed-before-swap"
        } catch {
            throw CheckFailure("\(context): \(error)")
        }
    }

    /// Opens the store with the old model, else the new one, and compares its state. Returns "old" or "new".
    @discardableResult
    private func check(_ store: String, expected: Expected, mustBeNew: Bool) throws -> String {
        var configuration = ModelContainer.Configuration(recoveryHandler: nil)
        configuration.migration = .never
        if !mustBeNew, let old = try? ModelContainer(path: store, model: Ledger.model, configuration: configuration) {
            defer { try? old.close() }
            guard try old.stateDigest() == expected.oldDigest, old.lastTransactionID == expected.lastTransactionID
            else { throw CheckFailure("the store opens with the old model but its state changed") }
            return "old"
        }
        let new: ModelContainer
        do {
            new = try ModelContainer(path: store, model: LedgerV2.model, configuration: configuration)
        } catch {
            throw CheckFailure("the store opens with neither model: \(error)")
        }
        defer { try? new.close() }
        guard try new.stateDigest() == expected.newDigest, new.lastTransactionID == expected.lastTransactionID else {
            throw CheckFailure("the store opens with the new model but its state is not the complete migration")
        }
        return "new"
    }

    /// Runs `egctl migrate STORE --model TARGET`, killing it with SIGKILL after `delay` µs; returns its exit status
    /// (`-9`, or the status it exited with before the kill).
    private func migrateWithEgctl(_ store: String, killingAfterMicroseconds delay: Int64?) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: egctlPath)
        process.arguments = ["migrate", store, "--model", targetPath]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        if let delay {
            usleep(UInt32(clamping: delay))
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal ? -process.terminationStatus : process.terminationStatus
    }

    private func copy(_ source: String, to destination: String) throws {
        try? FileManager.default.removeItem(atPath: destination)
        try FileManager.default.copyItem(atPath: source, toPath: destination)
    }
}
