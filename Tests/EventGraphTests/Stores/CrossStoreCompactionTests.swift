import Foundation
import LogFormat
import Testing

@testable import EventGraph

/// A compaction drops the records of the saves across stores its checkpoint covers (`Docs/FileFormat.md` §3.6), so
/// that store can no longer tell another participant whether it holds its part. The rule: before it compacts, every
/// other participant decides its part (one whose log still ends with it gets an empty transaction after it); a
/// store that cannot make them (opened alone, or a participant not mounted) refuses to compact.
@Suite("A compacted participant of a save across stores still lets the others decide")
struct CrossStoreCompactionTests {
    /// The store of a configuration of ``SeveralStoresModels/campus`` in a container of its three stores.
    static func store(_ configuration: String, of container: ModelContainer) throws -> Store {
        let uuid = try #require(container.storeUUID(ofConfiguration: configuration))
        return try #require(container.stores.first { $0.storeUUID == uuid })
    }

    /// Copies the three stores' files as they are now (no seal: as after a crash at this moment).
    static func copyFiles(of directory: TemporaryDirectory, to copy: TemporaryDirectory) throws {
        for file in ["private.eglog", "staff.eglog", "public.eglog"] {
            try FileManager.default.copyItem(atPath: directory.file(file), toPath: copy.file(file))
        }
    }

    @Test func aCrashAfterAParticipantCompactedLeavesTheSaveDecidable() throws {
        let directory = TemporaryDirectory()
        let container = try CrossStoreAtomicityTests.container(in: directory)
        try CrossStoreAtomicityTests.enrol("first", in: container)
        // The public store's checkpoint now holds its part; the private store's log still ends with its own.
        _ = try Self.store("Public", of: container).compact()
        let crashed = TemporaryDirectory()
        try Self.copyFiles(of: directory, to: crashed)
        try container.close()

        let reopened = try CrossStoreAtomicityTests.container(in: crashed)
        #expect(try CrossStoreAtomicityTests.names(in: reopened).pupils == ["first"])
        #expect(try CrossStoreAtomicityTests.names(in: reopened).lectures == ["first"])
        try reopened.close()
    }

    @Test func aStoreAloneRefusesToCompactWhileItsLogRecordsASaveAcrossStores() throws {
        let directory = TemporaryDirectory()
        let container = try CrossStoreAtomicityTests.container(in: directory)
        try CrossStoreAtomicityTests.enrol("first", in: container)
        try container.close()

        let alone = try ModelContainer(path: directory.file("public.eglog"), model: SeveralStoresModels.campus)
        let refused = #expect(throws: EventGraphError.self) { try alone.compact() }
        #expect(refused?.code == .storeMismatch)
        #expect(refused?.message.contains("was not compacted") == true, "\(refused?.message ?? "")")
        try alone.close()

        // In the container, with the other participant mounted, it compacts; its log then records no such save.
        let together = try CrossStoreAtomicityTests.container(in: directory)
        _ = try Self.store("Public", of: together).compact()
        try together.close()
        let compacted = try ModelContainer(path: directory.file("public.eglog"), model: SeveralStoresModels.campus)
        _ = try compacted.compact()
        try compacted.close()
    }

    @Test func aParticipantThatIsNotMountedKeepsTheStoreFromCompacting() throws {
        let directory = TemporaryDirectory()
        let container = try CrossStoreAtomicityTests.container(in: directory)
        try CrossStoreAtomicityTests.enrol("first", in: container)
        try container.close()

        var stores = SeveralStoresModels.stores(in: directory)
        stores[0].mounting = .never
        let partial = try ModelContainer(
            model: SeveralStoresModels.campus, stores: stores, configuration: .init(recoveryHandler: nil))
        let refused = #expect(throws: EventGraphError.self) { try Self.store("Public", of: partial).compact() }
        #expect(refused?.code == .storeMismatch)
        try partial.close()
    }
}
