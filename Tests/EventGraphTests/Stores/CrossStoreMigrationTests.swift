import EventGraph
import Foundation
import LogFormat
import Testing

/// Version 1 of a two-store model: members in the private store, their club in the public one.
private enum ClubsV1 {
    final class Member: ManagedObject {
        override class var entityName: String { "Member" }
        @Attribute var name: String = ""
        @Relationship(inverse: "members") var club: Club?
    }

    final class Club: ManagedObject {
        override class var entityName: String { "Club" }
        @Attribute var city: String = ""
        @Relationship(inverse: "club") var members: Set<Member>
    }

    static let model = try! ObjectModel(
        name: "Clubs", version: "1", types: [Member.self, Club.self], configurations: ["Public": [Club.self]])
}

/// Version 2: members get a nickname (an inferred migration).
private enum ClubsV2 {
    final class Member: ManagedObject {
        override class var entityName: String { "Member" }
        @Attribute var name: String = ""
        @Attribute var nickname: String = ""
        @Relationship(inverse: "members") var club: Club?
    }

    final class Club: ManagedObject {
        override class var entityName: String { "Club" }
        @Attribute var city: String = ""
        @Relationship(inverse: "club") var members: Set<Member>
    }

    static let model = try! ObjectModel(
        name: "Clubs", version: "2", types: [Member.self, Club.self], configurations: ["Public": [Club.self]])
}

/// A migration carries what the store's log records beside its objects: the named counters (a counter never hands
/// out a value twice, migrated or not) and the records of saves across stores (`Docs/FileFormat.md` §3.6) — and it
/// refuses a log that ends with an undecided part of such a save, which its sealed new log would count as committed.
@Suite("Migration keeps counters and saves across stores")
struct CrossStoreMigrationTests {
    private static func stores(in directory: TemporaryDirectory) -> [StoreDescription] {
        [
            StoreDescription(path: directory.file("private.eglog")),
            StoreDescription(path: directory.file("public.eglog"), configuration: "Public"),
        ]
    }

    /// Ada joins a club: one save across both stores.
    private static func join(_ container: ModelContainer) throws {
        let context = container.newBackgroundContext()
        let club = ClubsV1.Club()
        context.insert(club)
        club.city = "Oslo"
        let ada = ClubsV1.Member()
        context.insert(ada)
        ada.name = "Ada"
        ada.club = club
        try context.save()
    }

    @Test(arguments: StoreMigration.HistoryMode.allCases)
    func countersGoOnFromTheirLastValueAfterAMigration(mode: StoreMigration.HistoryMode) throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let container = try ModelContainer(path: path, model: ClubsV1.model)
        #expect(try (0..<3).map { _ in try container.nextValue(of: "memberID") } == [1, 2, 3])
        #expect(try container.nextValue(of: "clubID") == 1)
        let context = container.newBackgroundContext()
        context.insert(ClubsV1.Member())
        try context.save()
        try container.close()

        _ = try StoreMigration.migrate(path: path, to: ClubsV2.model, options: .init(historyMode: mode))
        let migrated = try ModelContainer(path: path, model: ClubsV2.model)
        #expect(try migrated.nextValue(of: "memberID") == 4, "memberID 1–3 were handed out before the migration")
        #expect(try migrated.nextValue(of: "clubID") == 2)
        try migrated.close()
    }

    @Test func aCompactedStoreKeepsItsCountersThroughALiveStateMigration() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let container = try ModelContainer(path: path, model: ClubsV1.model)
        for _ in 0..<5 { _ = try container.nextValue(of: "memberID") }
        _ = try container.compact()
        try container.close()
        _ = try StoreMigration.migrate(path: path, to: ClubsV2.model, options: .init(historyMode: .liveState))
        let migrated = try ModelContainer(path: path, model: ClubsV2.model)
        #expect(try migrated.nextValue(of: "memberID") == 6)
        try migrated.close()
    }

    @Test func aMigrationKeepingHistoryKeepsEachPartOfASaveAcrossStoresAndItsDecision() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(model: ClubsV1.model, stores: Self.stores(in: directory))
        try Self.join(container)
        try container.close()
        let parts = try Self.crossStoreRecords(directory.file("private.eglog"))
        #expect(parts.count == 1)

        _ = try StoreMigration.migrate(path: directory.file("private.eglog"), to: ClubsV2.model)
        #expect(try Self.crossStoreRecords(directory.file("private.eglog")) == parts)
        // Decided before (a seal followed it), decided after: the stores open together and on their own.
        let migrated = try ModelContainer(model: ClubsV2.model, stores: Self.stores(in: directory))
        let context = migrated.newBackgroundContext()
        let members = try context.fetch(FetchDescriptor<ClubsV2.Member>())
        #expect(members.map(\.name) == ["Ada"])
        #expect(members.first?.club?.city == "Oslo")
        try migrated.close()
        try ModelContainer(path: directory.file("private.eglog"), model: ClubsV2.model).close()
    }

    @Test func aLiveStateMigrationDoesNotDropTheRecordsOfSavesAcrossStores() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(model: ClubsV1.model, stores: Self.stores(in: directory))
        try Self.join(container)
        try container.close()
        let path = directory.file("private.eglog")
        let refused = #expect(throws: EventGraphError.self) {
            _ = try StoreMigration.migrate(path: path, to: ClubsV2.model, options: .init(historyMode: .liveState))
        }
        #expect(refused?.code == .storeMismatch)
        #expect(refused?.message.contains("records saves across stores") == true, "\(refused?.message ?? "")")

        // Compacted in its container (the public store decided its part first), it migrates.
        let together = try ModelContainer(model: ClubsV1.model, stores: Self.stores(in: directory))
        _ = try together.compact()
        try together.close()
        _ = try StoreMigration.migrate(path: path, to: ClubsV2.model, options: .init(historyMode: .liveState))
        let migrated = try ModelContainer(model: ClubsV2.model, stores: Self.stores(in: directory))
        let context = migrated.newBackgroundContext()
        #expect(try context.fetch(FetchDescriptor<ClubsV2.Member>()).map(\.name) == ["Ada"])
        try migrated.close()
    }

    @Test(arguments: StoreMigration.HistoryMode.allCases)
    func aStoreEndingWithAnUndecidedPartIsNotMigrated(mode: StoreMigration.HistoryMode) throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(model: ClubsV1.model, stores: Self.stores(in: directory))
        try Self.join(container)
        // A copy taken while the container is open has no seal after the part: as after a crash there.
        let crashed = directory.file("private-crashed.eglog")
        try FileManager.default.copyItem(atPath: directory.file("private.eglog"), toPath: crashed)
        try container.close()

        let refused = #expect(throws: EventGraphError.self) {
            _ = try StoreMigration.migrate(path: crashed, to: ClubsV2.model, options: .init(historyMode: mode))
        }
        #expect(refused?.code == .storeMismatch)
        #expect(refused?.message.contains("cannot be migrated") == true, "\(refused?.message ?? "")")
        // The log was left as it was: still undecided (no seal was written after the part).
        #expect(throws: EventGraphError.self) { _ = try ModelContainer(path: crashed, model: ClubsV1.model) }
        #expect(!FileManager.default.fileExists(atPath: StoreMigration.backupPath(for: crashed)))
    }

    /// Every cross-store record in a log, in order.
    private static func crossStoreRecords(_ path: String) throws -> [CrossStoreTransaction] {
        var records: [CrossStoreTransaction] = []
        try LogReader(path: path).scan { record in
            if case .transaction(let transaction) = record, let part = try transaction.changeset().crossStore {
                records.append(part)
            }
        }
        return records
    }
}
