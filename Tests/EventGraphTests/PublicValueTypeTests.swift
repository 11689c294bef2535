import EventGraph
import Foundation
import LogFormat
import Testing

/// EventGraph's own value types at its public boundary: apps see `StoredValue` (with Foundation dates and UUIDs),
/// `StoredValueType`, `RelationshipDeleteRule` and `CommitDurability`; the rows and the log keep their own forms.
@Suite("Public value types")
struct PublicValueTypeTests {
    static let identifier = UUID(uuidString: "0123C0DE-4567-89AB-CDEF-0123456789AB")!
    static let moment = Date(timeIntervalSinceReferenceDate: 12_345.625)

    /// A store with three samples; the second has `identifier` and `moment`.
    private func withSamples(_ body: (ObjectContext) throws -> Void) throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: TestModels.samples)
        let context = container.newBackgroundContext()
        for index in 0..<3 {
            let sample = Sample()
            context.insert(sample)
            sample.int64 = Int64(index)
            sample.uuid = index == 1 ? Self.identifier : UUID()
            sample.date = index == 1 ? Self.moment : Self.moment.addingTimeInterval(Double(index) - 1.5)
        }
        try context.save()
        try body(container.newBackgroundContext())
        try container.close()
    }

    @Test(arguments: [
        FetchFilter.equal("uuid", .uuid(identifier)),
        .equal("date", .date(moment)),
        .between("date", .date(moment), .date(moment.addingTimeInterval(0.25))),
    ])
    func aFilterWithFoundationValuesFindsTheirObject(filter: FetchFilter) throws {
        try withSamples { context in
            let found = try context.fetch(FetchDescriptor<Sample>(filter: filter))
            #expect(found.map(\.int64) == [1])
        }
    }

    @Test func theDynamicAPIReadsFoundationValues() throws {
        try withSamples { context in
            let sample = try #require(
                try context.fetch(FetchDescriptor<Sample>(filter: .equal("int64", .int64(1)))).first)
            #expect(sample.value(forKey: "uuid") == .attribute(.uuid(Self.identifier)))
            #expect(sample.value(forKey: "date").storedValue == .date(Self.moment))
        }
    }

    @Test func theModelDescribesItselfInPublicTypes() throws {
        let sample = try #require(TestModels.samples.entity(named: "Sample"))
        #expect(sample.attribute(named: "uuid")?.type == .uuid)
        #expect(sample.attribute(named: "date")?.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 0)))
        #expect(sample.attribute(named: "optionalInt")?.defaultValue == .null)
        #expect(sample.attribute(named: "point")?.type == .transformable)
        #expect(Int64.storedValueType == .int64 && Int?.storedValueType == .int64 && Int?.isOptionalType)
    }

    @Test(arguments: RelationshipDeleteRule.allCases)
    func aDeleteRuleSurvivesTheLog(rule: RelationshipDeleteRule) throws {
        // `Author.posts` is declared `.cascade`; re-declaring the rule through the schema checks every case maps.
        let model = try ObjectModel(name: "Blog", version: "1", types: [RuleOwner.self, RuleTarget.self])
        var schema = model.schema
        let owner = try #require(schema.entities.firstIndex { $0.name == "RuleOwner" })
        let position = try #require(schema.entities[owner].properties.firstIndex { $0.name == "targets" })
        guard case .relationship(var relationship) = schema.entities[owner].properties[position] else {
            Issue.record("RuleOwner.targets is not a relationship")
            return
        }
        relationship.deleteRule = rule.deleteRuleInLog
        schema.entities[owner].properties[position] = .relationship(relationship)

        let directory = TemporaryDirectory()
        let writer = try LogWriter(path: directory.file())
        try writer.append(schema: schema)
        try writer.close()
        let container = try ModelContainer(path: directory.file())
        #expect(container.model.entity(named: "RuleOwner")?.relationship(named: "targets")?.deleteRule == rule)
        try container.close()
    }

    @Test(arguments: zip(CommitDurability.allCases, ["full", "normal", "none"]))
    func aDurabilityOpensAStore(durability: CommitDurability, name: String) throws {
        #expect(durability.description == name)
        let directory = TemporaryDirectory()
        let container = try ModelContainer(
            path: directory.file(), model: TestModels.samples, configuration: .init(durability: durability))
        let context = container.newBackgroundContext()
        let sample = Sample()
        context.insert(sample)
        sample.int64 = 5
        try context.save()
        try container.close()
        let reopened = try ModelContainer(path: directory.file(), model: TestModels.samples)
        #expect(try reopened.newBackgroundContext().fetchCount(FetchDescriptor<Sample>()) == 1)
        try reopened.close()
    }
}

/// A schema read from a file is hostile: a default that is a blob reference (bytes of some transaction, which no
/// new object has) is refused with an error naming the attribute, not turned into a value.
@Suite("A schema's default values")
struct SchemaDefaultValueTests {
    @Test func aBlobReferenceAsADefaultIsRefused() throws {
        var schema = TestModels.samples.schema
        let entity = try #require(schema.entities.firstIndex { $0.name == "Sample" })
        let position = try #require(schema.entities[entity].properties.firstIndex { $0.name == "large" })
        guard case .attribute(var attribute) = schema.entities[entity].properties[position] else {
            Issue.record("Sample.large is not an attribute")
            return
        }
        attribute.defaultValue = .blob(BlobReference(transactionID: 1, index: 0, byteCount: 100))
        schema.entities[entity].properties[position] = .attribute(attribute)

        let directory = TemporaryDirectory()
        let writer = try LogWriter(path: directory.file())
        try writer.append(schema: schema)
        try writer.close()
        let error = try #require(throws: EventGraphError.self) { try ModelContainer(path: directory.file()) }
        #expect(error.code == .invalidModel)
        #expect(error.message.contains("Sample.large"))
    }
}

final class RuleOwner: ManagedObject {
    @Relationship(inverse: "owner", deleteRule: .cascade) var targets: [RuleTarget]
}

final class RuleTarget: ManagedObject {
    @Relationship(inverse: "targets") var owner: RuleOwner?
}

extension RelationshipDeleteRule {
    /// The log's rule, spelled out here so that the test does not use the conversion it checks.
    fileprivate var deleteRuleInLog: DeleteRule {
        switch self {
        case .nullify: .nullify
        case .cascade: .cascade
        case .deny: .deny
        case .noAction: .noAction
        }
    }
}
