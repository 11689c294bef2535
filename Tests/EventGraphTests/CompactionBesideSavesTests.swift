import Dispatch
import EventGraphExamples
import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A compaction (explicit, or the automatic checkpoint) runs beside the saves: the queue of saves is drained only to
/// take the state and to swap the new file in, so saves commit while the checkpoint is built and written; the
/// transactions they commit meanwhile are copied into the new file. A crash or a failure at any step leaves the old
/// log or the new one, complete, with every acknowledged save.
@Suite("Compaction beside saves")
struct CompactionBesideSavesTests {
    /// A container of the school model on `path`, with the given fault injector.
    static func open(_ path: String, faults: FaultInjector, checkpointEvery count: Int? = nil) throws
        -> ModelContainer
    {
        var configuration = ModelContainer.Configuration(durability: .full)
        configuration.faultInjector = faults
        configuration.automaticCheckpointTransactionCount = count
        return try ModelContainer(path: path, model: TestModels.school, configuration: configuration)
    }

    /// The codes of every course, sorted.
    static func courseCodes(_ container: ModelContainer) throws -> [String] {
        try container.newBackgroundContext().fetch(FetchDescriptor<Course>()).map(\.code).sorted()
    }

    /// Checks the file as `egctl verify` does: every frame, a clean end, and the replayed graph consistent; returns
    /// the replay's digest.
    static func verifiedDigest(of path: String) throws -> StateDigest {
        var graph = LogGraph(source: path)
        let report = try LogReader(path: path).scan { try graph.apply($0) }
        #expect(report.tail == .clean, "\(path): \(report.tail)")
        #expect(graph.anomalies.isEmpty, "\(path): \(graph.anomalies)")
        return graph.digest()
    }

    /// The temporary files of rewrites left next to the log.
    static func leftovers(in directory: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".rewrite-") }
    }

    @Test func aSaveFromAnotherThreadCompletesWhileTheCheckpointIsBeingWritten() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        let container = try Self.open(directory.file(), faults: faults)
        try AutomaticCheckpointTests.saveCourses(1...20, in: container.newBackgroundContext())
        let gate = RewriteGate(at: .checkpointWritten, faults: faults)
        let compaction = Background { () throws(EventGraphError) in _ = try container.compact() }
        #expect(gate.waitUntilReached())

        // The compaction is held between its phases, its new file written: a save must not wait for it.
        let save = Background {
            try AutomaticCheckpointTests.saveCourses(21...25, in: container.newBackgroundContext())
        }
        // A hang guard: the compaction is held until released, so a save that waits for it never ends by itself.
        let savedDuringCheckpoint = save.wait(seconds: 600)
        #expect(savedDuringCheckpoint, "a save waited for the compaction's whole rewrite")
        gate.release()
        #expect(compaction.wait(seconds: 600))
        #expect(save.wait(seconds: 600))
        #expect(compaction.error == nil)
        #expect(save.error == nil)

        // The checkpoint holds the state it took; the saves made beside it follow it in the new file.
        let (checkpoint, tail) = try AutomaticCheckpointTests.layout(of: directory.file())
        #expect(checkpoint == 20)
        #expect(tail == Array(21...25))
        let digest = try container.stateDigest()
        #expect(try Self.verifiedDigest(of: directory.file()) == digest)
        try container.close()
        let reopened = try ModelContainer(path: directory.file(), model: TestModels.school)
        #expect(try reopened.stateDigest() == digest)
        #expect(try Self.courseCodes(reopened) == (1...25).map { "C\($0)" }.sorted())
        try reopened.close()
    }

    /// Blobs written by saves beside the checkpoint are copied into the new file and read there by their new
    /// handles (the old offsets would point into the new file).
    @Test func externalValuesSavedBesideTheCheckpointAreReadFromTheNewFile() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        var configuration = ModelContainer.Configuration(durability: .full)
        configuration.faultInjector = faults
        let container = try ModelContainer(
            path: directory.file(), model: PhotoLocations.model, configuration: configuration)
        let setup = container.newBackgroundContext()
        PhotoLocations.addEvent(latitude: 1, longitude: 1, image: .filled(width: 48, height: 48, level: 1), in: setup)
        try setup.save()
        let generation = container.store.state.withLock { $0.blobGeneration }

        let gate = RewriteGate(at: .checkpointWritten, faults: faults)
        let compaction = Background { () throws(EventGraphError) in _ = try container.compact() }
        #expect(gate.waitUntilReached())
        let save = Background {
            let context = container.newBackgroundContext()
            guard let event = try PhotoLocations.events(in: context).first else {
                throw EventGraphError(.objectNotFound, "the event is gone")
            }
            PhotoLocations.setImage(.filled(width: 48, height: 48, level: 2), of: event, in: context)
            PhotoLocations.addEvent(
                latitude: 2, longitude: 2, image: .filled(width: 40, height: 40, level: 3), in: context)
            try context.save()
        }
        #expect(save.wait(seconds: 600))
        gate.release()
        #expect(compaction.wait(seconds: 600))
        #expect(compaction.error == nil && save.error == nil)
        #expect(container.store.state.withLock { $0.blobGeneration } == generation + 1)

        func levels(_ container: ModelContainer) throws -> [UInt8] {
            let context = container.newBackgroundContext()
            return try PhotoLocations.events(in: context).compactMap { $0.photo?.image?.pixels.first }.sorted()
        }
        #expect(try levels(container) == [2, 3])
        let digest = try container.stateDigest()
        try container.close()
        let reopened = try ModelContainer(path: directory.file(), model: PhotoLocations.model)
        #expect(try levels(reopened) == [2, 3])
        #expect(try reopened.stateDigest() == digest)
        try reopened.close()
    }

    /// Where a crash image of the store is taken and whether the rewrite fails there.
    static let crashPoints: [(FaultInjector.RewriteStage, Bool)] = FaultInjector.RewriteStage.allCases.flatMap {
        [($0, false), ($0, true)]
    }

    /// At each step of the rewrite, the file at the log's path (what a crash there leaves) opens with every save
    /// acknowledged so far, with the checkpoint or without it; a rewrite that fails there leaves no temporary file
    /// and a store that opens with every save.
    @Test(arguments: crashPoints)
    func aCrashOrFailureAtEachStepKeepsEverySave(stage: FaultInjector.RewriteStage, fails: Bool) throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let image = directory.file("crash-image/store.eglog")
        try FileManager.default.createDirectory(
            atPath: directory.file("crash-image"), withIntermediateDirectories: true)
        let faults = FaultInjector()
        let container = try Self.open(path, faults: faults)
        try AutomaticCheckpointTests.saveCourses(1...10, in: container.newBackgroundContext())
        // The state when the image is taken: every save acknowledged by then.
        let imageDigest = LockedValue<StateDigest?>(nil)
        faults.onRewriteStage { reached throws(LogFormatError) in
            // Between the phases no lock is held: saves commit there, on the compaction's own thread too.
            if reached == .checkpointWritten {
                try? AutomaticCheckpointTests.saveCourses(11...15, in: container.newBackgroundContext())
            }
            guard reached == stage else { return }
            try? FileManager.default.copyItem(atPath: path, toPath: image)
            imageDigest.withLock { $0 = try? container.stateDigest() }
            if fails { throw LogFormatError(.io, "stopped at \(stage) by the test", path: path) }
        }
        let outcome = Result { () throws(EventGraphError) in try container.compact() }
        faults.onRewriteStage(nil)
        #expect((try? outcome.get()) == nil ? fails : !fails)
        #expect(try Self.leftovers(in: directory) == [])
        #expect(try Self.courseCodes(container).count == (fails && stage == .anchored ? 10 : 15))

        // The crash image: the old log or the new one, with every save acknowledged when it was taken.
        let crashed = try ModelContainer(path: image, model: TestModels.school)
        #expect(try crashed.stateDigest() == imageDigest.withLock { $0 })
        try crashed.close()
        let (checkpoint, tail) = try AutomaticCheckpointTests.layout(of: image)
        #expect(checkpoint == nil || (checkpoint == 10 && tail == Array(11...15)))
        #expect(checkpoint == nil || stage == .renamed)

        // The store itself: a failure before the rename leaves it saving on the old log; after the rename (the
        // directory sync's place) the writer is poisoned, and the next open recovers the new file.
        let saved = (try? AutomaticCheckpointTests.saveCourses([16], in: container.newBackgroundContext())) != nil
        #expect(saved || (fails && stage == .renamed))
        let final = try container.stateDigest()
        try? container.close()
        let reopened = try ModelContainer(path: path, model: TestModels.school)
        #expect(try reopened.stateDigest() == final)
        #expect(try Self.verifiedDigest(of: path) == final)
        try reopened.close()
    }

    /// A failed write or sync of the new file while the tail is copied and sealed, a failed rename, a failed
    /// directory sync: the compaction fails, no save is lost, the store reopens.
    @Test(
        arguments: [
            (FaultInjector.Operation.write, 1), (.sync, 1), (.sync, 2), (.rename, 1), (.directorySync, 1),
        ])
    func aFailedFileOperationAfterTheSavesBesideItKeepsThem(operation: FaultInjector.Operation, call: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let faults = FaultInjector()
        let container = try Self.open(path, faults: faults)
        try AutomaticCheckpointTests.saveCourses(1...10, in: container.newBackgroundContext())
        faults.onRewriteStage { reached throws(LogFormatError) in
            guard reached == .checkpointWritten else { return }
            try? AutomaticCheckpointTests.saveCourses(11...15, in: container.newBackgroundContext())
            faults.arm(operation, onCall: call, fault: .fail(errno: EIO))
        }
        #expect(throws: EventGraphError.self) { try container.compact() }
        faults.onRewriteStage(nil)
        #expect(faults.firedFaults == [operation])
        #expect(try Self.leftovers(in: directory) == [])
        // Only a failed directory sync (after the rename) poisons the writer.
        let saved = (try? AutomaticCheckpointTests.saveCourses([16], in: container.newBackgroundContext())) != nil
        #expect(saved == (operation != .directorySync))
        let digest = try container.stateDigest()
        #expect(try Self.courseCodes(container).count == (saved ? 16 : 15))
        try? container.close()
        let reopened = try ModelContainer(path: path, model: TestModels.school)
        #expect(try reopened.stateDigest() == digest)
        #expect(try Self.verifiedDigest(of: path) == digest)
        try reopened.close()
    }

    /// Saves from several threads while automatic checkpoints run beside them: every acknowledged save is in the
    /// store, in the file and after a reopen, and the file verifies.
    @Test func savesFromSeveralThreadsDuringAutomaticCheckpointsAllSurvive() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let faults = FaultInjector()
        let container = try Self.open(path, faults: faults, checkpointEvery: 40)
        let threadCount = 4
        let savesPerThread = 60
        // The first checkpoint waits, its file written, until the other threads have saved beside it.
        let besides = DispatchSemaphore(value: 0)
        // The savers keep their last saves until the first checkpoint is held, so that they are made beside it.
        let held = DispatchSemaphore(value: 0)
        let heldOnce = LockedValue(false)
        let savedBeside = LockedValue(0)
        faults.onRewriteStage { reached throws(LogFormatError) in
            guard reached == .checkpointWritten,
                heldOnce.withLock({ held in
                    defer { held = true }; return !held
                })
            else { return }
            // Only saves that complete from now on count; the savers that were waiting for this moment go on.
            while besides.wait(timeout: .now()) == .success {}
            for _ in 0..<threadCount { held.signal() }
            let deadline = DispatchTime.now() + 600
            for _ in 0..<8 where besides.wait(timeout: deadline) == .success { savedBeside.withLock { $0 += 1 } }
        }
        let failures = LockedValue<[String]>([])
        onThreads(threadCount) { thread in
            let context = container.newBackgroundContext()
            for index in 0..<savesPerThread {
                // 200 saves are made by then: a checkpoint (every 40) has started.
                if index == 50 { _ = held.wait(timeout: .now() + 600) }
                let course = Course()
                context.insert(course)
                course.code = "T\(thread)-\(index)"
                do { try context.save() } catch { failures.withLock { $0.append("\(error)") } }
                besides.signal()
            }
        }
        container.waitForAutomaticCheckpoints()
        #expect(failures.withLock { $0 } == [])
        #expect(savedBeside.withLock { $0 } == 8)
        #expect(container.lastAutomaticCheckpointFailure == nil)
        let reference = (0..<threadCount).flatMap { thread in (0..<savesPerThread).map { "T\(thread)-\($0)" } }.sorted()
        #expect(try Self.courseCodes(container) == reference)
        #expect(try AutomaticCheckpointTests.layout(of: path).checkpoint != nil)
        let digest = try container.stateDigest()
        try container.close()
        #expect(try Self.verifiedDigest(of: path) == digest)
        let reopened = try ModelContainer(path: path, model: TestModels.school)
        #expect(try Self.courseCodes(reopened) == reference)
        #expect(try reopened.stateDigest() == digest)
        try reopened.close()
    }

    /// A save across stores made while a participant compacts is copied into its new file with its record: after a
    /// crash right after the compaction, the stores still decide it committed.
    @Test func aSaveAcrossStoresBesideTheCompactionKeepsItsRecord() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        let container = try CrossStoreAtomicityTests.container(in: directory, faults: faults)
        try CrossStoreAtomicityTests.enrol("first", in: container)
        let publicStore = try CrossStoreCompactionTests.store("Public", of: container)
        let gate = RewriteGate(at: .checkpointWritten, faults: faults)
        let compaction = Background { () throws(EventGraphError) in _ = try publicStore.compact() }
        #expect(gate.waitUntilReached())
        let save = Background { try CrossStoreAtomicityTests.enrol("second", in: container) }
        let savedBeside = save.wait(seconds: 600)
        #expect(savedBeside, "a save across stores waited for the compaction's whole rewrite")
        gate.release()
        #expect(compaction.wait(seconds: 600))
        #expect(save.wait(seconds: 600))
        #expect(compaction.error == nil)
        #expect(save.error == nil)
        let tail = try AutomaticCheckpointTests.layout(of: directory.file("public.eglog")).tail
        #expect(tail.count == 1)

        let crashed = TemporaryDirectory()
        try CrossStoreCompactionTests.copyFiles(of: directory, to: crashed)
        try container.close()
        let reopened = try CrossStoreAtomicityTests.container(in: crashed)
        #expect(try CrossStoreAtomicityTests.names(in: reopened).pupils == ["first", "second"])
        #expect(try CrossStoreAtomicityTests.names(in: reopened).lectures == ["first", "second"])
        try reopened.close()
    }

    /// A store that closes while its automatic checkpoint is held at `stage` cancels it instead of waiting it out:
    /// the checkpoint stops at its next check (it reaches no later stage), its temporary file is removed, and the
    /// log is the old one, with every save acknowledged (those made beside the checkpoint too). Only a checkpoint
    /// already renamed over the log stays. Before h48 the close waited for the whole checkpoint: every later stage
    /// was reached and the log held the checkpoint.
    @Test(arguments: FaultInjector.RewriteStage.allCases)
    func aStoreThatClosesCancelsItsAutomaticCheckpoint(at stage: FaultInjector.RewriteStage) throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let faults = FaultInjector()
        let container = try Self.open(path, faults: faults, checkpointEvery: 5)
        let gate = RewriteGate(at: stage, faults: faults)
        let reachedAfterGate = LockedValue<[FaultInjector.RewriteStage]>([])
        let stages = FaultInjector.RewriteStage.allCases
        try AutomaticCheckpointTests.saveCourses(1...5, in: container.newBackgroundContext())
        // The fifth save returned while its checkpoint runs on its own thread, held at `stage`.
        #expect(gate.waitUntilReached())
        if stage == .checkpointWritten {
            // No lock is held there: saves commit beside the checkpoint.
            let saves = Background {
                try AutomaticCheckpointTests.saveCourses(6...7, in: container.newBackgroundContext())
            }
            #expect(saves.wait(seconds: 600))
            #expect(saves.error == nil)
        }
        let digest = try container.stateDigest()
        let events = LockedValue<[String]>([])
        container.observeAutomaticCheckpoints { event in events.withLock { $0.append("\(event)") } }
        faults.onRewriteStage { reached throws(LogFormatError) in
            if stages.firstIndex(of: reached)! > stages.firstIndex(of: stage)! {
                reachedAfterGate.withLock { $0.append(reached) }
            }
        }
        let close = Background { () throws(EventGraphError) in try container.close() }
        // The close cancels the checkpoint, then waits for it to stop; it goes on once released.
        while !container.store.automaticCheckpoint.isStopped { usleep(1000) }
        gate.release()
        #expect(close.wait(seconds: 600))
        #expect(close.error == nil)
        #expect(container.lastAutomaticCheckpointFailure == nil)
        #expect(try Self.leftovers(in: directory) == [])
        let (checkpoint, tail) = try AutomaticCheckpointTests.layout(of: path)
        let savedCount = stage == .checkpointWritten ? 7 : 5
        if stage == .renamed {
            // Renamed already: the checkpoint is complete and stays.
            #expect(checkpoint == 5)
            #expect(events.withLock { $0 }.first?.hasPrefix("ended") == true)
        } else {
            #expect(reachedAfterGate.withLock { $0 } == [], "the checkpoint went on after the close")
            #expect(checkpoint == nil, "the close waited for the checkpoint")
            #expect(tail == Array(1...UInt64(savedCount)))
            #expect(events.withLock { $0 } == ["cancelled"])
        }
        let reopened = try ModelContainer(path: path, model: TestModels.school)
        #expect(try reopened.stateDigest() == digest)
        #expect(try Self.courseCodes(reopened).count == savedCount)
        try reopened.close()
        #expect(try Self.verifiedDigest(of: path) == digest)
    }

    /// An explicit compaction on another thread is cancelled by a close too: it throws "closed", removes its
    /// temporary file and leaves the log as it was, with every save. (Before h48 it ran its whole checkpoint and
    /// then failed with the same error when it came to swap its file into the closed store.)
    @Test func aStoreThatClosesCancelsAnExplicitCompaction() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let faults = FaultInjector()
        let container = try Self.open(path, faults: faults)
        try AutomaticCheckpointTests.saveCourses(1...5, in: container.newBackgroundContext())
        let gate = RewriteGate(at: .checkpointWritten, faults: faults)
        let outcome = LockedValue<EventGraphError?>(nil)
        let compaction = Background {
            do throws(EventGraphError) { _ = try container.compact() } catch { outcome.withLock { $0 = error } }
        }
        #expect(gate.waitUntilReached())
        let digest = try container.stateDigest()
        let copyRounds = LockedValue(0)
        faults.onRewriteStage { reached throws(LogFormatError) in
            if reached != .checkpointWritten { copyRounds.withLock { $0 += 1 } }
        }
        let close = Background { () throws(EventGraphError) in try container.close() }
        while !container.store.closing.isCancelled { usleep(1000) }
        gate.release()
        #expect(close.wait(seconds: 600))
        #expect(compaction.wait(seconds: 600))
        #expect(close.error == nil)
        #expect(outcome.withLock { $0?.code } == .closed)
        #expect(copyRounds.withLock { $0 } == 0)
        #expect(try Self.leftovers(in: directory) == [])
        #expect(try AutomaticCheckpointTests.layout(of: path).checkpoint == nil)
        let reopened = try ModelContainer(path: path, model: TestModels.school)
        #expect(try reopened.stateDigest() == digest)
        try reopened.close()
    }
}

/// Holds a rewrite at one stage (the first time it gets there) until the test releases it.
final class RewriteGate: Sendable {
    private let reached = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)
    private let hasHeld = LockedValue(false)

    init(at stage: FaultInjector.RewriteStage, faults: FaultInjector) {
        faults.onRewriteStage { [self] current throws(LogFormatError) in
            guard current == stage,
                hasHeld.withLock({ held in
                    defer { held = true }; return !held
                })
            else { return }
            reached.signal()
            released.wait()
        }
    }

    /// Waits until the rewrite is held (at most 10 minutes, so that a broken rewrite fails the test, not the run).
    func waitUntilReached() -> Bool { reached.wait(timeout: .now() + 600) == .success }

    func release() { released.signal() }
}

/// Runs a throwing body on a thread of its own; the test waits for it with a bound.
final class Background: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let failure = LockedValue<String?>(nil)
    private let hasFinished = LockedValue(false)

    init(_ body: @escaping @Sendable () throws -> Void) {
        let thread = Thread { [self] in
            do { try body() } catch { failure.withLock { $0 = "\(error)" } }
            hasFinished.withLock { $0 = true }
            done.signal()
        }
        thread.start()
    }

    /// Whether the body finished within `seconds` (once it has, later calls return at once).
    func wait(seconds: Double) -> Bool {
        if hasFinished.withLock({ $0 }) { return true }
        guard done.wait(timeout: .now() + seconds) == .success else { return false }
        done.signal()
        return true
    }

    /// What the body threw, once it finished.
    var error: String? { failure.withLock { $0 } }
}
