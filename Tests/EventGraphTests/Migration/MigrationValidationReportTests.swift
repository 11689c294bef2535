import Foundation
import Testing

@testable import EventGraph

@Suite("A dry run reports the existing objects that break the new model's validation rules")
struct MigrationValidationReportTests {
    /// The message a version 2 save gives for an item that breaks `rule` (``ShopItemSpec/init(breaking:)``).
    static func message(of rule: ValidationRuleKind) -> String {
        switch rule {
        case .required: "is required"
        case .minimumValue: "is -5, below the minimum 0.0"
        case .maximumValue: "is 500, above the maximum 100.0"
        case .minimumLength: "has length 1, shorter than the minimum 2"
        case .maximumLength: "has length 6, longer than the maximum 4"
        case .pattern: "'Not OK' does not match the pattern [a-z ]+"
        case .minimumCount: "has 0 objects, fewer than the minimum 1"
        case .maximumCount: "has 4 objects, more than the maximum 3"
        }
    }

    static func property(of rule: ValidationRuleKind) -> String {
        switch rule {
        case .required: "owner"
        case .minimumValue, .maximumValue: "price"
        case .minimumLength, .maximumLength: "code"
        case .pattern: "title"
        case .minimumCount, .maximumCount: "parts"
        }
    }

    @Test(arguments: ValidationRuleKind.allCases)
    func eachRuleAlone(_ rule: ValidationRuleKind) throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let keys = try writeShopV1(at: path, items: [ShopItemSpec(), ShopItemSpec(breaking: rule), ShopItemSpec()])
        let report = try StoreMigration.dryRun(path: path, to: ShopV2.model)
        let failure = try #require(report.validationFailures.first)
        #expect(report.validationFailures.count == 1, "\(report.validationFailures)")
        #expect(failure.entityName == "Item")
        #expect(failure.propertyName == Self.property(of: rule))
        #expect(failure.rule == rule)
        #expect(failure.objectCount == 1)
        #expect(failure.examples.map(\.objectID.key) == [keys[1]])
        #expect(failure.examples.map(\.objectID.entityName) == ["Item"])
        #expect(failure.examples.map(\.message) == [Self.message(of: rule)])
        #expect(
            report.description.contains("invalid: Item.\(Self.property(of: rule)) breaks the \(rule) rule in 1 object"))
    }

    /// With rules on attributes only, the dry run finds them on the stream of records, without building the state.
    @Test(arguments: [ValidationRuleKind.minimumValue, .maximumValue, .minimumLength, .maximumLength, .pattern])
    func eachAttributeRuleAloneOnTheStream(_ rule: ValidationRuleKind) throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let keys = try writeShopV1(at: path, items: [ShopItemSpec(), ShopItemSpec(breaking: rule), ShopItemSpec()])
        let report = try StoreMigration.dryRun(path: path, to: ShopV2Values.model)
        let failure = try #require(report.validationFailures.first)
        #expect(report.validationFailures.count == 1, "\(report.validationFailures)")
        #expect(failure.propertyName == Self.property(of: rule))
        #expect(failure.rule == rule)
        #expect(failure.objectCount == 1)
        #expect(failure.examples.map(\.objectID.key) == [keys[1]])
        #expect(failure.examples.map(\.message) == [Self.message(of: rule)])
    }

    /// Values fixed, broken and deleted by later transactions: the stream follows each object to its last value, and
    /// finds what a state built whole finds.
    @Test(arguments: [false, true])
    func laterChangesFixBreakAndDelete(_ liveState: Bool) throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        var items: [ShopItemSpec] = [
            .init(breaking: .maximumValue), .init(breaking: .pattern), .init(), .init(breaking: .minimumLength),
        ]
        items += (0..<7).map { _ in ShopItemSpec(breaking: .maximumLength) }
        let keys = try writeShopV1(at: path, items: items)
        try changeShopV1(at: path, fix: keys[0], breaking: keys[2], deleted: keys[3])
        var options = StoreMigration.Options(historyMode: liveState ? .liveState : .full)
        let streamed = try StoreMigration.dryRun(path: path, to: ShopV2Values.model, options: options)
            .validationFailures
        let found = streamed.map {
            "\($0.propertyName) \($0.rule) \($0.objectCount) \($0.examples.map(\.objectID.key))"
        }
        #expect(
            found == [
                "code maximumLength 7 \(Array(keys[4..<9]))", "title pattern 2 \([keys[1], keys[2]])",
            ])
        options.computesStateDigest = true
        #expect(
            try StoreMigration.dryRun(path: path, to: ShopV2Values.model, options: options).validationFailures
                == streamed)
        // Both models agree on the attribute rules.
        let windowed = try StoreMigration.dryRun(path: path, to: ShopV2.model).validationFailures
        #expect(windowed.filter { $0.propertyName != "owner" && $0.propertyName != "parts" } == streamed)
    }

    /// A plan's custom stage computes the values the rules see: the dry run runs its code, and the pass that
    /// builds the reported objects runs it again.
    @Test func aCustomStagesValuesAreChecked() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        var cheap = ShopItemSpec()
        cheap.price = 5
        let keys = try writeShopV1(at: path, items: [ShopItemSpec(), cheap, ShopItemSpec()])
        let tenfold = MigrationStage.custom(
            to: ShopV2Values.model,
            [
                EntityMigration(entity: "Item", computing: ["price"]) { old, new in
                    guard case .int64(let price)? = old.value(forKey: "price") else { return }
                    new.setValue(.int64(price * 10), forKey: "price")
                }
            ])
        let report = try StoreMigration.dryRun(path: path, plan: MigrationPlan(from: ShopV1.model, stages: [tenfold]))
        let found = report.validationFailures.map { "\($0.propertyName) \($0.rule) \($0.objectCount)" }
        #expect(found == ["price maximumValue 2"])
        #expect(report.validationFailures.first?.examples.map(\.objectID.key) == [keys[0], keys[2]])
        #expect(report.validationFailures.first?.examples.first?.message == "is 500, above the maximum 100.0")
    }

    @Test func severalRulesAtOnceAreReportedByEntityPropertyAndRule() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        var both = ShopItemSpec(breaking: .maximumValue)
        both.title = "Not OK"
        let keys = try writeShopV1(
            at: path,
            items: [
                both, ShopItemSpec(breaking: .minimumLength), ShopItemSpec(breaking: .maximumValue), ShopItemSpec(),
            ])
        let report = try StoreMigration.dryRun(path: path, to: ShopV2.model)
        let found = report.validationFailures.map { "\($0.propertyName) \($0.rule) \($0.objectCount)" }
        #expect(found == ["code minimumLength 1", "price maximumValue 2", "title pattern 1"])
        #expect(report.validationFailures[1].examples.map(\.objectID.key) == [keys[0], keys[2]])
        #expect(report.validationFailures[2].examples.map(\.objectID.key) == [keys[0]])
    }

    @Test func aStoreWhoseObjectsKeepTheRulesReportsNone() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        try writeShopV1(at: path, items: [ShopItemSpec(), ShopItemSpec()])
        let report = try StoreMigration.dryRun(path: path, to: ShopV2.model)
        #expect(report.validationFailures.isEmpty)
        #expect(!report.description.contains("invalid"))
        #expect(report.objectCounts["Item"] == 2)
    }

    @Test func theExamplesAreTheFewWithTheSmallestKeys() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let keys = try writeShopV1(at: path, items: Array(repeating: ShopItemSpec(breaking: .maximumValue), count: 8))
        let report = try StoreMigration.dryRun(path: path, to: ShopV2.model)
        let failure = try #require(report.validationFailures.first)
        #expect(report.validationFailures.count == 1)
        #expect(failure.objectCount == 8)
        #expect(StoreMigration.ValidationFailure.exampleLimit == 5)
        #expect(failure.examples.map(\.objectID.key) == Array(keys.sorted().prefix(5)))
        #expect(failure.description.hasSuffix(", …"))
    }

    /// Every path of the dry run checks the same final state: streamed in windows (history kept, or live state
    /// only), or a state built whole (an old log with a checkpoint, a state digest asked for).
    @Test func everyWayOfBuildingTheStateFindsTheSameFailures() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        var items = (0..<6).map { ShopItemSpec(breaking: ValidationRuleKind.allCases[$0]) }
        items.append(ShopItemSpec())
        try writeShopV1(at: path, items: items)
        let streamed = try StoreMigration.dryRun(path: path, to: ShopV2.model).validationFailures
        #expect(streamed.count == 6)
        var whole = StoreMigration.Options()
        whole.computesStateDigest = true
        #expect(try StoreMigration.dryRun(path: path, to: ShopV2.model, options: whole).validationFailures == streamed)
        var live = StoreMigration.Options(historyMode: .liveState)
        #expect(try StoreMigration.dryRun(path: path, to: ShopV2.model, options: live).validationFailures == streamed)
        // Windows of two objects: the failures of each window add up.
        var small = StoreMigration.Options()
        small.windowObjectCount = 2
        #expect(try StoreMigration.dryRun(path: path, to: ShopV2.model, options: small).validationFailures == streamed)
        live.windowObjectCount = 2
        #expect(try StoreMigration.dryRun(path: path, to: ShopV2.model, options: live).validationFailures == streamed)
        live.windowObjectCount = nil
        // After a compaction the old log starts with a checkpoint, which a history-keeping run builds whole.
        let container = try ModelContainer(path: path, model: ShopV1.model)
        try container.compact()
        try container.close()
        #expect(try StoreMigration.dryRun(path: path, to: ShopV2.model).validationFailures == streamed)
        #expect(try StoreMigration.dryRun(path: path, to: ShopV2.model, options: live).validationFailures == streamed)
    }

    /// A migration keeps objects that break the new rules (as Core Data's and SwiftData's lightweight migrations
    /// do); the next save that inserts or changes one of them fails with the usual validation error.
    @Test func aMigrationKeepsBreakingObjectsAndTheirNextSaveFails() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let keys = try writeShopV1(at: path, items: [ShopItemSpec(), ShopItemSpec(breaking: .maximumValue)])
        let report = try StoreMigration.migrate(path: path, to: ShopV2.model)
        #expect(report.validationFailures.isEmpty)  // a migration does not check: its dry run does
        let container = try ModelContainer(path: path, model: ShopV2.model)
        let context = container.newBackgroundContext()
        let items = try context.fetch(FetchDescriptor<ShopV2.Item>(sortBy: [SortDescriptor(\.price)]))
        #expect(items.map(\.price) == [50, 500])
        #expect(items.map { $0.objectID.key } == keys)
        // A save that leaves the breaking object alone succeeds.
        items[0].title = "changed"
        try context.save()
        items[1].title = "changed too"
        let error = try #require(throws: EventGraphError.self) { try context.save() }
        #expect(error.code == .validation)
        #expect(
            error.failures.map { "\($0.propertyName ?? "-"): \($0.message)" } == [
                "price: is 500, above the maximum 100.0"
            ])
        items[1].price = 100
        try context.save()
        try container.close()
        // The dry run of the migrated store (already at version 2: nothing to migrate) finds nothing left.
        let after = try StoreMigration.dryRun(path: path, to: ShopV2.model)
        #expect(after.isUpToDate)
        #expect(after.validationFailures.isEmpty)
    }

    /// Rules are not part of a model's shape: a store at the new model's shape opens without a migration, so its
    /// dry run still checks the rules (and says there is nothing to migrate).
    @Test func aStoreAlreadyAtTheShapeStillHasItsRulesChecked() throws {
        let directory = TemporaryDirectory()
        let path = directory.file()
        let keys = try writeShopV1(at: path, items: [ShopItemSpec(breaking: .pattern)])
        try StoreMigration.migrate(path: path, to: ShopV2.model)
        let report = try StoreMigration.dryRun(path: path, to: ShopV2.model)
        #expect(report.isUpToDate)
        #expect(report.validationFailures.map(\.rule) == [.pattern])
        #expect(report.validationFailures.first?.examples.map(\.objectID.key) == keys)
        #expect(report.description.contains("nothing to migrate"))
        #expect(report.description.contains("invalid: Item.title breaks the pattern rule in 1 object"))
    }
}
