import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// A save of new objects is checked and staged in one pass (`StoreState.stageInsertion`): it stages exactly when the
/// separate checks (self-containment, both sides of every edge) pass and staging would accept the changeset, and then
/// stages the rows staging does; anything else goes to the general path.
@Suite("One-pass staging of a save of new objects")
struct InsertionStagingTests {
    static let model = TestModels.school
    static let queue = CommitQueue(lastTransactionID: 0, lastCommitTimeMicroseconds: 0)

    static func stageInOnePass(_ operations: [ChangeOperation], in state: StoreState) -> StagedChanges? {
        state.stageInsertion(operations, model: model, version: 1, overlay: queue, checksInverses: true)
    }

    static func stage(_ operations: [ChangeOperation], in state: StoreState) throws -> StagedChanges {
        let changeset = Changeset(
            transactionID: 1, commitTimeMicroseconds: 0, author: "", nextKey: 0, operations: operations)
        return try state.stage(changeset, model: model, overlay: queue)
    }

    static func expectSameRows(_ staged: StagedChanges, _ expected: StagedChanges, _ round: Int) {
        #expect(staged.changes.map(\.key) == expected.changes.map(\.key), "round \(round)")
        for (change, other) in zip(staged.changes, expected.changes) {
            #expect(change.entityIndex == other.entityIndex, "round \(round)")
            #expect(change.row?.version == other.row?.version, "round \(round)")
            #expect(change.row.map { Array($0.values) } == other.row.map { Array($0.values) }, "round \(round)")
        }
    }

    @Test func stagesExactlyWhatTheSeparateChecksAndStagingAccept() throws {
        let seed = TestSeed.make()
        var random = SeededGenerator(seed: seed)
        let state = StoreState(model: Self.model)
        var stagedCount = 0
        for round in 0..<400 {
            let (operations, _) = ConsistentInsertionTests.randomInsertion(using: &random)
            let accepted =
                Store.isSelfContainedInsertion(operations)
                && InverseRepair.isConsistentInsertion(operations, model: Self.model)
            let staged = Self.stageInOnePass(operations, in: state)
            #expect((staged != nil) == accepted, "round \(round), seed \(seed)")
            guard let staged else { continue }
            stagedCount += 1
            // Each new object's row reads its insert's changes over the defaults: no array of every value is built.
            for change in staged.changes {
                guard case .inserted = change.row?.values.storage else {
                    Issue.record("round \(round): key \(change.key) was staged with an array of its values")
                    continue
                }
            }
            Self.expectSameRows(staged, try Self.stage(operations, in: state), round)
        }
        #expect(stagedCount > 100)
    }

    /// A new object's row answers every read as the array staging builds would: the last change of a property, else
    /// its default, also through the attribute accessors and once installed in the columns.
    @Test func aNewObjectsRowReadsItsChangesOverTheDefaults() {
        let course = ConsistentInsertionTests.entity("Course")
        let defaults = Self.model.entities[course].defaultValues
        let attribute = defaults.indices.first { Self.model.entities[course].properties[$0].attribute != nil }!
        let changes = [
            PropertyChange(propertyIndex: UInt32(attribute), value: .attribute(.string("first"))),
            PropertyChange(propertyIndex: UInt32(attribute), value: .attribute(.string("last"))),
        ]
        let row = Row(entityIndex: course, key: 9, version: 3, changes: changes, defaults: defaults)
        var expected = defaults
        expected[attribute] = .attribute(.string("last"))
        #expect(Array(row.values) == expected && row.values.array == expected && row.values.count == defaults.count)
        #expect(row.values.attributeValue(at: attribute) == .string("last"))
        #expect(row.values.attributeValueUnlessRelationship(at: attribute) == .string("last"))
        #expect(!row.isHandle)
        var state = StoreState(model: Self.model)
        state.put(row)
        #expect(state.row(entityIndex: course, key: 9).map { Array($0.values) } == expected)
    }

    @Test func anyOtherChangesetGoesToTheGeneralPath() {
        let course = ConsistentInsertionTests.entity("Course")
        let lessons = ConsistentInsertionTests.property(course, "lessons")
        let object = ObjectReference(entityIndex: UInt32(course), key: 5)
        let other = ObjectReference(entityIndex: UInt32(course), key: 6)
        var state = StoreState(model: Self.model)
        #expect(Self.stageInOnePass([.insert(object, [])], in: state) != nil)
        #expect(Self.stageInOnePass([], in: state) == nil)
        #expect(Self.stageInOnePass([.insert(object, []), .delete(object)], in: state) == nil)
        #expect(Self.stageInOnePass([.update(object, [])], in: state) == nil)
        // Inserted twice: staging refuses it, with its own error.
        #expect(Self.stageInOnePass([.insert(object, []), .insert(object, [])], in: state) == nil)
        // A property the entity lacks, an entity the model lacks.
        #expect(
            Self.stageInOnePass([.insert(object, [PropertyChange(propertyIndex: 999, value: .toOne(nil))])], in: state)
                == nil)
        #expect(Self.stageInOnePass([.insert(ObjectReference(entityIndex: 999, key: 5), [])], in: state) == nil)
        // A target the save does not insert, and one of another store (left alone, as the conflict check does).
        #expect(
            Self.stageInOnePass(
                [.insert(object, [PropertyChange(propertyIndex: lessons, value: .toMany([other]))])], in: state) == nil)
        // An object that exists already.
        state.put(Row(entityIndex: course, key: 5, version: 1, values: Self.model.entities[course].defaultValues))
        #expect(Self.stageInOnePass([.insert(object, [])], in: state) == nil)
        #expect(Self.stageInOnePass([.insert(other, [])], in: state) != nil)
    }
}
