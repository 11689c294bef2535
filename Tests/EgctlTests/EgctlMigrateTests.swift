import EventGraph
import EventGraphExamples
import Foundation
import LogFormat
import Testing

@Suite("egctl migrate: dry run, migration, rollback")
struct EgctlMigrateTests {
    /// A PhotoLocations version 1 store of three events, one save each, and an empty version 2 store (the target
    /// model); returns their paths.
    private static func writeStores(_ scratch: Scratch) throws -> (store: String, target: String) {
        let store = scratch.file("photos.eglog")
        let target = scratch.file("empty-v2.eglog")
        let container = try ModelContainer(path: store, model: PhotoLocationsV1.model)
        let context = container.newBackgroundContext()
        for index in 0..<3 {
            let event = PhotoLocationsV1.Event()
            context.insert(event)
            event.latitude = Double(index)
            try context.save()
        }
        try container.close()
        try PhotoLocations.open(path: target).close()
        return (store, target)
    }

    @Test func photosVersion1MigratesToTheModelOfAnEmptyVersion2StoreAndRollsBack() throws {
        let scratch = Scratch()
        let (store, target) = try Self.writeStores(scratch)
        let dryRun = try Egctl.run("migrate", store, "--model", target, "--dry-run", "--json")
        #expect(dryRun.status == 0, "\(dryRun.stderr)")
        let planned = try dryRun.json()
        #expect(planned["isDryRun"] as? Bool == true)
        #expect(planned["transactionCount"] as? Int == 3)
        #expect((planned["objectCounts"] as? [String: Int]) == ["Event": 3, "Photo": 0])
        let kinds = (planned["changes"] as? [[String: String]])?.compactMap { $0["kind"] } ?? []
        #expect(Set(kinds) == ["entityAdded", "propertyAdded"])

        let migrate = try Egctl.run("migrate", store, "--model", target)
        #expect(migrate.status == 0, "\(migrate.stderr)")
        #expect(migrate.stdout.contains("migrated Locations version 1 → Locations version 2"))
        let again = try Egctl.run("migrate", store, "--model", target)
        #expect(again.stdout.contains("nothing to migrate"))
        let history = try Egctl.run("replay", store, "--until", "2", "--summary", "--json").json()
        #expect(history["lastTransactionID"] as? Int == 2)

        let rollback = try Egctl.run("migrate", store, "--rollback")
        #expect(rollback.status == 0, "\(rollback.stderr)")
        #expect(rollback.stdout.contains("restored Locations version 1"))
        let none = try Egctl.run("migrate", store, "--rollback")
        #expect(none.status != 0)
        #expect(none.stderr.contains("nothing to roll back"))
    }

    @Test func aStoreAnotherProcessHoldsIsNotMigratedAndStaysAsItWas() throws {
        let scratch = Scratch()
        let (store, target) = try Self.writeStores(scratch)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let writer = try LogWriter(path: store)  // this test process now holds the writer lock
        for mode in [[], ["--live-state"]] {
            let result = try Egctl.run(["migrate", store, "--model", target] + mode)
            #expect(result.status != 0)
            #expect(result.stderr.contains("in use by another process (pid \(getpid()))"), "\(result.stderr)")
        }
        try writer.close()
        // Only this process's own close may have appended its seal; the migration wrote nothing.
        let after = try Data(contentsOf: URL(fileURLWithPath: store))
        #expect(after.prefix(before.count) == before)
        #expect(!FileManager.default.fileExists(atPath: store + ".premigration"))
    }
}
