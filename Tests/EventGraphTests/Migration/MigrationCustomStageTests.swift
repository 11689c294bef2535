import EventGraph
import Foundation
import Testing

@Suite("Migration plans with custom stages: code computes what inference cannot")
struct MigrationCustomStageTests {
    @Test func aCustomStageChangesAStringIntoAnInteger() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let last = try writePeopleV1(at: path)
        let plan = MigrationPlan(from: PeopleV1.model, stages: [PeopleStages.parseAge])
        var options = StoreMigration.Options()
        options.computesStateDigest = true
        let report = try StoreMigration.migrate(path: path, plan: plan, options: options)
        #expect(report.changes.contains { $0.kind == .computed && $0.description.hasPrefix("Person.age") })

        let container = try ModelContainer(
            path: path, model: PeopleV2.model, configuration: .init(recoveryHandler: nil))
        #expect(container.lastTransactionID == last)
        #expect(try container.stateDigest() == report.stateDigest)
        let people = try container.newBackgroundContext().fetch(
            FetchDescriptor<PeopleV2.Person>(sortBy: [SortDescriptor(\.name)]))
        #expect(people.map(\.age) == [99, 22, 23, 24])
        // History is kept: person 0 had age 20 before it moved, under the new model's type.
        let early = try container.view(asOfTransaction: 1).newBackgroundContext().fetch(
            FetchDescriptor<PeopleV2.Person>())
        #expect(early.map(\.age) == [20])
        try container.close()
    }

    @Test func aPlanMixesCustomAndInferredStagesInOnePassAndSplitsAnEntity() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let last = try writePeopleV1(at: path)
        var options = StoreMigration.Options()
        options.computesStateDigest = true
        let report = try StoreMigration.migrate(path: path, plan: PeopleStages.plan, options: options)
        #expect(report.targetModel == "People version 4")
        #expect(report.transactionCount == Int(last))
        #expect(report.objectCounts == ["Person": 4, "Address": 4])

        let container = try ModelContainer(
            path: path, model: PeopleV4.model, configuration: .init(recoveryHandler: nil))
        #expect(container.lastTransactionID == last)
        #expect(try container.stateDigest() == report.stateDigest)
        let context = container.newBackgroundContext()
        let people = try context.fetch(FetchDescriptor<PeopleV4.Person>(sortBy: [SortDescriptor(\.fullName)]))
        #expect(people.map(\.fullName) == ["person 0", "person 2", "person 3", "person 4"])
        #expect(people.map(\.age) == [99, 22, 23, 24])
        #expect(people.allSatisfy { $0.nickname == "none" })
        #expect(people.map { $0.address?.street } == ["1 New Road", "2 Main Street", "3 Main Street", "4 Main Street"])
        #expect(people.map { $0.address?.city } == ["Lyon", "Lyon", "Oslo", "Lyon"])
        #expect(people.allSatisfy { $0.address?.person === $0 })
        // The deleted person's address went with it.
        #expect(try context.fetch(FetchDescriptor<PeopleV4.Address>()).count == 4)

        // History: before person 0 moved, its address was the old one; before person 1 was deleted, it had one.
        let view = try container.view(asOfTransaction: 5)
        let viewContext = view.newBackgroundContext()
        let before = try viewContext.fetch(
            FetchDescriptor<PeopleV4.Person>(sortBy: [SortDescriptor(\.fullName)]))
        #expect(before.map { $0.address?.street } == (0..<5).map { "\($0) Main Street" })
        #expect(before.first?.age == 20)
        try container.close()

        // A second run finds the store at the plan's last version.
        #expect(try StoreMigration.migrate(path: path, plan: PeopleStages.plan).isUpToDate)
    }

    /// Objects a stage creates for the records of a checkpoint go with their old object when a later transaction
    /// deletes it (they were left behind, dangling, before).
    @Test func objectsCreatedFromACheckpointAreDeletedWithTheirOldObject() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        do {
            let container = try ModelContainer(path: path, model: PeopleV1.model)
            let context = container.newBackgroundContext()
            for index in 0..<3 {
                let person = PeopleV1.Person()
                context.insert(person)
                person.name = "person \(index)"
                person.age = "\(30 + index)"
                person.street = "\(index) Main Street"
            }
            try context.save()
            try container.compact()
            let people = try context.fetch(FetchDescriptor<PeopleV1.Person>(sortBy: [SortDescriptor(\.name)]))
            context.delete(people[1])
            try context.save()
            try container.close()
        }
        var options = StoreMigration.Options()
        options.computesStateDigest = true
        let report = try StoreMigration.migrate(path: path, plan: PeopleStages.plan, options: options)
        #expect(report.objectCounts == ["Person": 2, "Address": 2])
        let container = try ModelContainer(
            path: path, model: PeopleV4.model, configuration: .init(recoveryHandler: nil))
        #expect(try container.stateDigest() == report.stateDigest)
        let context = container.newBackgroundContext()
        let addresses = try context.fetch(FetchDescriptor<PeopleV4.Address>(sortBy: [SortDescriptor(\.street)]))
        #expect(addresses.map(\.street) == ["0 Main Street", "2 Main Street"])
        #expect(addresses.allSatisfy { $0.person != nil })
        try container.close()
    }

    @Test func aPlanStartsAtTheStoresVersion() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try writePeopleV1(at: path)
        try StoreMigration.migrate(
            path: path, plan: MigrationPlan(from: PeopleV1.model, stages: [PeopleStages.parseAge]))
        // The store is at version 2 now: only the stages after it run.
        let report = try StoreMigration.migrate(path: path, plan: PeopleStages.plan)
        #expect(report.sourceModel == "People version 2")
        let container = try ModelContainer(
            path: path, model: PeopleV4.model, configuration: .init(recoveryHandler: nil))
        let addresses = try container.newBackgroundContext().fetch(FetchDescriptor<PeopleV4.Address>())
        #expect(addresses.count == 4)
        try container.close()
    }

    @Test(arguments: [false, true])
    func aStageThatThrowsWritesNothingAndLeavesTheOldStoreIntact(isDryRun: Bool) throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let last = try writePeopleV1(at: path, ageOfLast: "unknown")
        let digest = try {
            let container = try ModelContainer(path: path, model: PeopleV1.model)
            defer { try? container.close() }
            return try container.stateDigest()
        }()
        let error = try #require(throws: EventGraphError.self) {
            if isDryRun {
                try StoreMigration.dryRun(path: path, plan: PeopleStages.plan)
            } else {
                try StoreMigration.migrate(path: path, plan: PeopleStages.plan)
            }
        }
        #expect(error.code == .modelMismatch)
        #expect(error.message.contains("the custom stage to People version 2 failed for Person #"))
        #expect(error.message.contains("age \"unknown\" is not a number"))
        #expect(!FileManager.default.fileExists(atPath: StoreMigration.backupPath(for: path)))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(leftovers == ["store.eglog"])

        var configuration = ModelContainer.Configuration(recoveryHandler: nil)
        configuration.migration = .never
        let container = try ModelContainer(path: path, model: PeopleV1.model, configuration: configuration)
        #expect(container.lastTransactionID == last)
        #expect(try container.stateDigest() == digest)
        try container.close()
    }

    @Test func withoutAPlanATypeChangeIsRefusedNamingTheCustomStage() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try writePeopleV1(at: path)
        let error = try #require(throws: EventGraphError.self) {
            try StoreMigration.migrate(path: path, to: PeopleV2.model)
        }
        #expect(error.message.contains("Person.age changes type from String to Int64"))
        #expect(error.message.contains("custom stage"))
    }
}
