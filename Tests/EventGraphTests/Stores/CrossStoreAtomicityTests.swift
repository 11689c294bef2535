import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// One save across stores commits in every store it writes or in none (`Docs/FileFormat.md` §3.6), whatever write
/// or sync fails; opening the stores together decides a save a crash left undecided, and a store alone never shows
/// a part of one.
@Suite("A save across stores commits in all of them or in none")
struct CrossStoreAtomicityTests {
    /// A pupil (private store) enrolled in a lecture (public store) of the same name: one save across two stores.
    static func enrol(_ name: String, in container: ModelContainer) throws {
        let context = container.newBackgroundContext()
        let lecture = Lecture()
        context.insert(lecture)
        lecture.code = name
        let pupil = Pupil()
        context.insert(pupil)
        pupil.name = name
        pupil.lectures.insert(lecture)
        try context.save()
    }

    /// The pupils' and lectures' names, each pupil's lectures checked to be its own.
    static func names(in container: ModelContainer) throws -> (pupils: Set<String>, lectures: Set<String>) {
        let context = container.newBackgroundContext()
        let pupils = try context.fetch(FetchDescriptor<Pupil>())
        for pupil in pupils { #expect(pupil.lectures.map(\.code) == [pupil.name], "\(pupil.name)'s lectures") }
        return (Set(pupils.map(\.name)), Set(try context.fetch(FetchDescriptor<Lecture>()).map(\.code)))
    }

    static let configurations = [ObjectModel.defaultConfigurationName, "Staff", "Public"]

    static func digests(of container: ModelContainer) throws -> [StateDigest] {
        try configurations.map { try container.stateDigest(ofConfiguration: $0) }
    }

    static func container(
        in directory: TemporaryDirectory, faults: FaultInjector? = nil,
        reports: Reports? = nil
    ) throws -> ModelContainer {
        var configuration = ModelContainer.Configuration(recoveryHandler: nil)
        if let reports { configuration.recoveryHandler = { report in reports.append(report) } }
        configuration.faultInjector = faults
        return try ModelContainer(
            model: SeveralStoresModels.campus, stores: SeveralStoresModels.stores(in: directory),
            configuration: configuration)
    }

    /// The recovery reports a container's open delivered.
    final class Reports: Sendable {
        private let reports = LockedValue<[StoreRecoveryReport]>([])
        func append(_ report: StoreRecoveryReport) { reports.withLock { $0.append(report) } }
        var all: [StoreRecoveryReport] { reports.withLock { $0 } }
    }

    /// What a view of one store's file shows: the lectures' codes of the public store, the pupils' names of the
    /// private one.
    static func shown(in view: ModelContainer, of file: String) throws -> Set<String> {
        let context = view.newBackgroundContext()
        return file == "public.eglog"
            ? Set(try context.fetch(FetchDescriptor<Lecture>()).map(\.code))
            : Set(try context.fetch(FetchDescriptor<Pupil>()).map(\.name))
    }

    /// The changeset of the last transaction in a log.
    static func lastChangeset(_ path: String) throws -> Changeset? {
        var last: Changeset?
        try LogReader(path: path).scan { record in
            if case .transaction(let transaction) = record { last = try transaction.changeset() }
        }
        return last
    }

    /// The private and public stores' files, the one that a save across them writes first (smaller UUID) first.
    static func filesInWriteOrder(_ container: ModelContainer) -> [String] {
        let files = [
            (container.storeUUID(ofConfiguration: ObjectModel.defaultConfigurationName)!, "private.eglog"),
            (container.storeUUID(ofConfiguration: "Public")!, "public.eglog"),
        ]
        return files.sorted { $0.0.logUUID < $1.0.logUUID }.map(\.1)
    }

    @Test func eachStoresPartNamesTheSaveAndEveryParticipantWithItsTransaction() throws {
        let directory = TemporaryDirectory()
        let container = try Self.container(in: directory)
        try Self.enrol("first", in: container)
        let privateUUID = try #require(container.storeUUID(ofConfiguration: ObjectModel.defaultConfigurationName))
        let publicUUID = try #require(container.storeUUID(ofConfiguration: "Public"))
        try container.close()

        let privatePart = try #require(try Self.lastChangeset(directory.file("private.eglog")))
        let publicPart = try #require(try Self.lastChangeset(directory.file("public.eglog")))
        let record = try #require(privatePart.crossStore)
        #expect(publicPart.crossStore == record)
        let expected = [
            CrossStoreTransaction.Participant(
                storeUUID: privateUUID.logUUID, transactionID: privatePart.transactionID),
            CrossStoreTransaction.Participant(storeUUID: publicUUID.logUUID, transactionID: publicPart.transactionID),
        ].sorted { $0.storeUUID < $1.storeUUID }
        #expect(record.participants == expected)
    }

    @Test func aSaveOfOneStoreWritesOneVersion1ChangesetAndSyncsOnceAndOneOfTwoSyncsBothStoresOnce() throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        let container = try Self.container(in: directory, faults: faults)
        try Self.enrol("first", in: container)

        let (writes, syncs) = (faults.callCount(.write), faults.callCount(.sync))
        let context = container.newBackgroundContext()
        let lecture = Lecture()
        context.insert(lecture)
        lecture.code = "alone"
        let session = Session()
        context.insert(session)
        session.lecture = lecture
        try context.save()
        #expect(faults.callCount(.write) - writes == 1)
        #expect(faults.callCount(.sync) - syncs == 1)

        let (crossWrites, crossSyncs) = (faults.callCount(.write), faults.callCount(.sync))
        try Self.enrol("second", in: container)
        #expect(faults.callCount(.write) - crossWrites == 2, "one write per store")
        #expect(faults.callCount(.sync) - crossSyncs == 2, "one sync per store, in one round")
        try container.close()

        var payloads: [[UInt8]] = []
        try LogReader(path: directory.file("public.eglog")).scan { record in
            if case .transaction(let transaction) = record { payloads.append(try transaction.payload) }
        }
        let alone = try #require(payloads.dropLast().last)
        #expect(alone.first == 1, "payload version 1: what a save of one store wrote before")
        #expect(try Changeset(decoding: alone).crossStore == nil)
        #expect(payloads.last?.first == 2)
    }

    @Test(
        arguments: [
            (FaultInjector.Operation.write, 1, FaultInjector.Fault.fail(errno: EIO)),
            (.write, 2, .fail(errno: ENOSPC)),
            (.write, 1, .tear(errno: EIO)),
            (.write, 2, .tear(errno: ENOSPC)),
            (.sync, 1, .fail(errno: EIO)),
            (.sync, 2, .fail(errno: EIO)),
        ])
    func aFaultAtAnyWriteOrSyncLeavesTheSaveInNeitherStore(
        operation: FaultInjector.Operation, call: Int, fault: FaultInjector.Fault
    ) throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        let container = try Self.container(in: directory, faults: faults)
        try Self.enrol("first", in: container)
        faults.arm(operation, onCall: call, fault: fault)
        #expect(throws: EventGraphError.self) { try Self.enrol("second", in: container) }
        #expect(faults.firedFaults == [operation])
        for configuration in ["Public", ObjectModel.defaultConfigurationName] {
            // Both participants refuse saves until reopened, the one whose I/O succeeded too.
            let context = container.newBackgroundContext()
            let object: ManagedObject = configuration == "Public" ? Lecture() : Pupil()
            context.insert(object)
            #expect(throws: EventGraphError.self, "\(configuration)") { try context.save() }
        }
        _ = try? container.close()

        let reports = Reports()
        let reopened = try Self.container(in: directory, reports: reports)
        let names = try Self.names(in: reopened)
        #expect(names.pupils == ["first"])
        #expect(names.lectures == ["first"])
        let digests = try Self.digests(of: reopened)
        try Self.enrol("third", in: reopened)
        let afterSave = try Self.digests(of: reopened)
        try reopened.close()
        let again = try Self.container(in: directory)
        #expect(try Self.digests(of: again) == afterSave, "reopening changes no store's digest")
        #expect(digests != afterSave)
        #expect(try Self.names(in: again).pupils == ["first", "third"])
        try again.close()
    }

    @Test func aStoreAloneRefusesToOpenForWritingOnAnUndecidedPartAndItsViewLeavesThePartOut() throws {
        let directory = TemporaryDirectory()
        let container = try Self.container(in: directory)
        try Self.enrol("first", in: container)
        try Self.enrol("second", in: container)
        let (holder, lacking) = { (files: [String]) in (files[0], files[1]) }(Self.filesInWriteOrder(container))
        try container.close()
        // As after a kill between the two stores' appends: the first store has its part (and no seal after it),
        // the second never got its own.
        try Self.removeSeal(directory.file(holder))
        try Self.cutLastTransaction(directory.file(lacking))

        let refused = #expect(throws: EventGraphError.self) {
            _ = try ModelContainer(path: directory.file(holder), model: SeveralStoresModels.campus)
        }
        #expect(refused?.code == .storeMismatch)
        #expect(refused?.message.contains("across stores") == true, "\(refused?.message ?? "")")
        let reports = Reports()
        let view = try ModelContainer.view(
            path: directory.file(holder), model: SeveralStoresModels.campus,
            recoveryHandler: { report in reports.append(report) })
        #expect(try Self.shown(in: view, of: holder) == ["first"], "the view leaves the undecided part out")
        #expect(reports.all.map(\.kind) == [.leftOutUndecidedSave])

        let decided = Reports()
        let reopened = try Self.container(in: directory, reports: decided)
        #expect(decided.all.map(\.kind) == [.removedPartialSave])
        #expect(decided.all.first?.path == directory.file(holder))
        #expect(try Self.names(in: reopened).pupils == ["first"])
        #expect(try Self.names(in: reopened).lectures == ["first"])
        try reopened.close()
        for file in [holder, lacking] {
            try ModelContainer(path: directory.file(file), model: SeveralStoresModels.campus).close()
        }
    }

    /// A view as of a part of a save across stores that a later transaction follows shows it: the later
    /// transaction decides it committed. The view's replay reads no transaction after its own, but notes that one
    /// follows (a variant that did not took the part for the log's undecided last one and left it out).
    @Test func aViewAsOfAPartThatATransactionFollowsShowsIt() throws {
        let directory = TemporaryDirectory()
        let container = try Self.container(in: directory)
        try Self.enrol("first", in: container)
        try Self.enrol("second", in: container)
        try container.close()
        for file in Self.filesInWriteOrder(container) {
            // Each save's part in this store: the first save's is the view's last transaction.
            var parts: [UInt64] = []
            try LogReader(path: directory.file(file)).scan { record in
                if case .transaction(let transaction) = record, try transaction.changeset().crossStore != nil {
                    parts.append(transaction.transactionID)
                }
            }
            try #require(parts.count == 2, "\(file): \(parts)")
            let reports = Reports()
            let view = try ModelContainer.view(
                path: directory.file(file), asOfTransaction: parts[0], model: SeveralStoresModels.campus,
                recoveryHandler: { report in reports.append(report) })
            #expect(try Self.shown(in: view, of: file) == ["first"], "\(file)")
            #expect(reports.all.isEmpty, "\(file): \(reports.all.map(\.kind))")
        }
    }

    @Test func anUndecidedSaveThatEveryStoreHoldsIsKeptAndConfirmedWhenTheStoresOpenTogether() throws {
        let directory = TemporaryDirectory()
        let container = try Self.container(in: directory)
        try Self.enrol("first", in: container)
        try Self.enrol("second", in: container)
        let digests = try Self.digests(of: container)
        try container.close()
        // As after a crash once both parts were written: no seal follows them.
        for file in ["private.eglog", "public.eglog"] { try Self.removeSeal(directory.file(file)) }
        #expect(throws: EventGraphError.self) {
            _ = try ModelContainer(path: directory.file("public.eglog"), model: SeveralStoresModels.campus)
        }

        let reports = Reports()
        let reopened = try Self.container(in: directory, reports: reports)
        #expect(reports.all.isEmpty)
        #expect(try Self.names(in: reopened).pupils == ["first", "second"])
        #expect(try Self.digests(of: reopened) == digests)
        try reopened.close()
        // Decided for good: each store opens on its own again.
        for file in ["private.eglog", "public.eglog"] {
            try ModelContainer(path: directory.file(file), model: SeveralStoresModels.campus).close()
        }
    }

    /// Cuts the last transaction, and everything after it, off a log.
    static func cutLastTransaction(_ path: String) throws {
        var start: UInt64?
        try LogReader(path: path).scan { record in
            if case .transaction(let transaction) = record { start = transaction.byteOffset }
        }
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.truncate(atOffset: try #require(start))
        try handle.close()
    }

    /// Cuts the seal a clean close wrote off the end of a log.
    static func removeSeal(_ path: String) throws {
        var seal: UInt64?
        try LogReader(path: path).scan { record in
            if case .seal(let byteOffset) = record { seal = byteOffset }
        }
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.truncate(atOffset: try #require(seal))
        try handle.close()
    }
}
