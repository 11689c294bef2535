import EventGraphExamples
import Foundation
import LogFormat
import Testing

@testable import EventGraph

@Suite("Migration is safe: faults, rollback, downgrades")
struct MigrationSafetyTests {
    /// How many times a fault-free migration of the library store calls each file operation.
    static let callCounts: [FaultInjector.Operation: Int] = {
        let directory = TemporaryDirectory()
        _ = try! writeLibraryV1(at: directory.file())
        let faults = FaultInjector()
        var options = StoreMigration.Options()
        options.faultInjector = faults
        _ = try! StoreMigration.migrate(path: directory.file(), to: LibraryV2.model, options: options)
        return Dictionary(uniqueKeysWithValues: FaultInjector.Operation.allCases.map { ($0, faults.callCount($0)) })
    }()

    static let faultPoints: [(FaultInjector.Operation, Int)] = FaultInjector.Operation.allCases.flatMap { operation in
        (1...max(1, callCounts[operation] ?? 0)).map { (operation, $0) }
    }

    @Test(arguments: faultPoints)
    func aFaultAtAnyStepLeavesTheOldStoreOrTheNewOneComplete(operation: FaultInjector.Operation, call: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try writeLibraryV1(at: path)
        let oldDigest = try digest(path, LibraryV1.model)
        let expected = try migratedDigest(of: path, in: directory)
        let faults = FaultInjector()
        faults.arm(operation, onCall: call, fault: .fail(errno: EIO))
        var options = StoreMigration.Options()
        options.faultInjector = faults
        let succeeded = (try? StoreMigration.migrate(path: path, to: LibraryV2.model, options: options)) != nil
        try expectOldOrNewLibrary(at: path, succeeded: succeeded, oldDigest: oldDigest, newDigest: expected)
    }

    @Test func rollbackRestoresTheOldLog() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try writeLibraryV1(at: path)
        let oldDigest = try digest(path, LibraryV1.model)
        try StoreMigration.migrate(path: path, to: LibraryV2.model)
        let report = try StoreMigration.rollback(path: path)
        #expect(report.restoredModel == "Library version 1")
        #expect(try digest(path, LibraryV1.model) == oldDigest)
        #expect(!FileManager.default.fileExists(atPath: StoreMigration.backupPath(for: path)))
    }

    @Test func rollbackRefusesToDropLaterTransactionsUnlessAsked() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try writeLibraryV1(at: path)
        try StoreMigration.migrate(path: path, to: LibraryV2.model)
        do {
            let container = try ModelContainer(path: path, model: LibraryV2.model)
            let context = container.newBackgroundContext()
            context.insert(LibraryV2.Reader())
            try context.save()
            try container.close()
        }
        let error = try #require(throws: EventGraphError.self) { try StoreMigration.rollback(path: path) }
        #expect(error.message.contains("1 transactions committed after its migration"))
        let report = try StoreMigration.rollback(path: path, discardingLaterTransactions: true)
        #expect(report.discardedTransactionCount == 1)
    }

    @Test func rollbackWithoutABackupIsAClearError() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try writeLibraryV1(at: path)
        let error = try #require(throws: EventGraphError.self) { try StoreMigration.rollback(path: path) }
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("nothing to roll back"))
    }

    @Test func aNewerStoreIsNotOpenedWithAnOlderModel() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try writeLibraryV1(at: path)
        try StoreMigration.migrate(path: path, to: LibraryV2.model)
        let withBackup = try #require(throws: EventGraphError.self) {
            try ModelContainer(path: path, model: LibraryV1.model)
        }
        #expect(withBackup.code == .modelMismatch)
        #expect(withBackup.message.contains("newer than this app's version 1"))
        #expect(withBackup.message.contains("--rollback"))
        try FileManager.default.removeItem(atPath: StoreMigration.backupPath(for: path))
        let without = try #require(throws: EventGraphError.self) {
            try ModelContainer(path: path, model: LibraryV1.model)
        }
        #expect(without.message.contains("no backup"))
    }

    @Test func aDamagedLogIsRefusedWithTheDamageAndSalvageSuggested() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try writeLibraryV1(at: path, bookCount: 30)
        // Flip a byte in the middle of the file: later frames prove it had been synced, so it is damage.
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size / 2)
        let byte = try #require(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: size / 2)
        try handle.write(contentsOf: [byte ^ 0xFF])
        try handle.close()
        let error = try #require(throws: EventGraphError.self) {
            try StoreMigration.migrate(path: path, to: LibraryV2.model)
        }
        #expect(error.message.contains("salvage"))
        #expect(!FileManager.default.fileExists(atPath: StoreMigration.backupPath(for: path)))
    }

    /// The digest a fault-free migration of a copy of `path` gives.
    private func migratedDigest(of path: String, in directory: TemporaryDirectory) throws -> StateDigest {
        let copy = directory.file("reference.eglog")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try StoreMigration.migrate(path: copy, to: LibraryV2.model)
        return try digest(copy, LibraryV2.model)
    }

    private func digest(_ path: String, _ model: ObjectModel) throws -> StateDigest {
        var never = ModelContainer.Configuration(recoveryHandler: nil)
        never.migration = .never
        let container = try ModelContainer(path: path, model: model, configuration: never)
        defer { try? container.close() }
        return try container.stateDigest()
    }
}

@Suite("Seed 004: PhotoLocations opens its version 1 store by inferred migration")
struct PhotoLocationsMigrationTests {
    private func writeVersion1Store(at path: String) throws -> [Double] {
        let container = try ModelContainer(path: path, model: PhotoLocationsV1.model)
        let context = container.newBackgroundContext()
        var latitudes: [Double] = []
        for index in 0..<5 {
            let event = PhotoLocationsV1.Event()
            context.insert(event)
            event.timeStamp = Date(timeIntervalSinceReferenceDate: Double(index) * 60)
            event.latitude = Double(index * 10)
            event.longitude = -Double(index)
            event.thumbnail = .filled(width: 4, height: 4, level: UInt8(index))
            latitudes.append(event.latitude)
            try context.save()
        }
        try container.close()
        return latitudes
    }

    @Test func version2SeesEveryEventWithAnEmptyPhotoAndItsHistory() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let latitudes = try writeVersion1Store(at: path)
        let container = try PhotoLocations.open(path: path)
        let context = container.newBackgroundContext()
        let events = try PhotoLocations.events(in: context)
        #expect(events.map(\.latitude) == latitudes.reversed())
        #expect(events.allSatisfy { $0.photo == nil })
        #expect(events.first?.thumbnail == .filled(width: 4, height: 4, level: 4))
        let view = try container.view(asOfTransaction: 2)
        let early = try PhotoLocations.events(in: view.newBackgroundContext())
        #expect(early.map(\.latitude) == [10, 0])
        // The migrated store takes photos.
        PhotoLocations.setImage(.filled(width: 32, height: 32, level: 9), of: events[0], in: context)
        try context.save()
        try container.close()
    }

    @Test func version1To2AndRollBack() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let latitudes = try writeVersion1Store(at: path)
        try PhotoLocations.open(path: path).close()
        try StoreMigration.rollback(path: path)
        let container = try ModelContainer(path: path, model: PhotoLocationsV1.model)
        let events = try container.newBackgroundContext().fetch(FetchDescriptor<PhotoLocationsV1.Event>())
        #expect(events.map(\.latitude).sorted() == latitudes)
        try container.close()
    }
}
