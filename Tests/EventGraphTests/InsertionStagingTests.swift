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

    /// A new object's values go into the columns from its changes and the defaults in place (not through the
    /// collection's iterator): the columns hold what writing the same values as an array writes, in a new slot and
    /// over a slot that held other values, every kind of value and a property changed twice included.
    @Test func aNewObjectsColumnsAreWrittenFromItsChanges() {
        let target = ObjectReference(entityIndex: 1, key: 40)
        let defaults: [PropertyValue] = [
            .attribute(.null), .attribute(.string("default")), .attribute(.int64(0)), .toOne(nil), .toMany([]),
            .attribute(.double(1.5)),
        ]
        let changes = [
            PropertyChange(propertyIndex: 1, value: .attribute(.string("first"))),
            PropertyChange(propertyIndex: 2, value: .attribute(.int64(7))),
            PropertyChange(propertyIndex: 4, value: .toMany([target, ObjectReference(entityIndex: 1, key: 41)])),
            PropertyChange(propertyIndex: 3, value: .toOne(target)),
            PropertyChange(propertyIndex: 1, value: .attribute(.string("last, and longer than the first"))),
        ]
        let row = Row(entityIndex: 0, key: 9, version: 3, changes: changes, defaults: defaults)
        let expected = Array(row.values)
        #expect(expected[1] == .attribute(.string("last, and longer than the first")) && expected[5] == defaults[5])
        var fromChanges = ColumnChunk()
        var fromArray = ColumnChunk()
        let other: [PropertyValue] = [
            .attribute(.string("other")), .attribute(.string("x")), .attribute(.int64(1)), .toOne(nil),
            .toMany([target]),
            .attribute(.null), .attribute(.int64(99)),
        ]
        // Slot 0 holds a longer row of other values first, which the new values then replace; slot 1 is new.
        _ = fromChanges.append(key: 1, version: 1, values: other)
        _ = fromArray.append(key: 1, version: 1, values: other)
        let slot = fromChanges.append(key: 9, version: 3, values: row.values)
        #expect(fromArray.append(key: 9, version: 3, values: expected) == slot)
        fromChanges.replace(at: 0, version: 4, values: row.values)
        fromArray.replace(at: 0, version: 4, values: expected)
        for position in [0, slot] {
            #expect(fromChanges.valueCount(at: position) == defaults.count)
            for property in 0..<other.count {
                #expect(
                    fromChanges.columns[property].value(at: position)
                        == fromArray.columns[property].value(at: position),
                    "slot \(position), property \(property)")
            }
            for property in defaults.indices {
                #expect(fromChanges.columns[property].value(at: position) == expected[property])
            }
        }
    }

    /// A staged insertion's unique tuples (its uniqueness check's table) go into the uniqueness index as they are —
    /// the whole table into an empty index — and leave the state as installing its rows one by one does.
    @Test func aStagedInsertionsTuplesInstallAsItsRowsWould() throws {
        let course = ConsistentInsertionTests.entity("Course")
        let code = try #require(Self.model.entities[course].properties.firstIndex { $0.name == "code" })
        var general = StoreState(model: Self.model)
        var adopting = StoreState(model: Self.model)
        for round in 0..<4 {
            // Codes repeat within a round (the last insert holds it) and across rounds (the new object takes it).
            let operations = (0..<50).map { number in
                ChangeOperation.insert(
                    ObjectReference(entityIndex: UInt32(course), key: UInt64(1_000 * (round + 1) + number)),
                    [
                        PropertyChange(
                            propertyIndex: UInt32(code), value: .attribute(.string("C\((number + 7 * round) % 45)")))
                    ])
            }
            let staged = try #require(Self.stageInOnePass(operations, in: general), "round \(round)")
            var claimed: [UniqueKey: UInt64] = [:]
            for change in staged.changes {
                for constraint in Self.model.entities[change.entityIndex].uniqueConstraints {
                    if let row = change.row, let tuple = UniqueKey(constraint, values: row.values) {
                        claimed[tuple] = change.key
                    }
                }
            }
            #expect(claimed.count == 45)
            #expect(round > 0 || adopting.uniqueIndex.isEmpty)
            general.install(staged, model: Self.model)
            adopting.install(staged, model: Self.model, newTuples: claimed)
            #expect(adopting.uniqueIndex == general.uniqueIndex, "round \(round)")
            #expect(adopting.digest(model: Self.model) == general.digest(model: Self.model), "round \(round)")
        }
        #expect(general.uniqueIndex.count == 45)
    }

    /// A staged insertion takes its rows' unique tuples while it reads their values, in the order the uniqueness check
    /// goes through the rows; the check then finds the same clashes and claims the same tuples from them as from the
    /// rows (which it read again, cold in a bulk save's cache, before).
    @Test func aStagedInsertionsTuplesAreThoseItsRowsMake() throws {
        let seed = TestSeed.make()
        var random = SeededGenerator(seed: seed)
        let directory = TemporaryDirectory()
        let container = try ModelContainer(path: directory.file(), model: Self.model)
        defer { try? container.close() }
        let course = ConsistentInsertionTests.entity("Course")
        let code = try #require(Self.model.entities[course].properties.firstIndex { $0.name == "code" })
        let state = StoreState(model: Self.model)
        var clashingRounds = 0
        for round in 0..<60 {
            // Codes from a small set (clashes within the save), some left to their default (every new course then
            // has the empty code), and objects of an entity without a constraint between them.
            var key: UInt64 = 10
            let operations = (0..<Int.random(in: 1...12, using: &random)).map { _ in
                key += 1
                guard Bool.random(using: &random) else {
                    let note = ConsistentInsertionTests.entity("Note")
                    return ChangeOperation.insert(ObjectReference(entityIndex: UInt32(note), key: key), [])
                }
                let changes =
                    Int.random(in: 0..<4, using: &random) == 0
                    ? []
                    : [
                        PropertyChange(
                            propertyIndex: UInt32(code),
                            value: .attribute(.string("C\(Int.random(in: 0..<6, using: &random))")))
                    ]
                return ChangeOperation.insert(ObjectReference(entityIndex: UInt32(course), key: key), changes)
            }
            let staged = try #require(Self.stageInOnePass(operations, in: state), "round \(round), seed \(seed)")
            let taken = try #require(staged.newTuples, "round \(round)")
            var fromRows: [StagedChanges.NewTuple] = []
            for (position, change) in staged.changes.enumerated() {
                let constraints = Self.model.entities[change.entityIndex].uniqueConstraints
                for (ordinal, constraint) in constraints.enumerated() {
                    if let row = change.row, let tuple = UniqueKey(constraint, values: row.values) {
                        fromRows.append(.init(tuple: tuple, position: position, ordinal: ordinal))
                    }
                }
            }
            #expect(taken.map(\.tuple) == fromRows.map(\.tuple), "round \(round), seed \(seed)")
            #expect(taken.map(\.position) == fromRows.map(\.position), "round \(round)")
            #expect(taken.map(\.ordinal) == fromRows.map(\.ordinal), "round \(round)")

            var rowsOnly = staged
            rowsOnly.newTuples = nil
            var claimed: [UniqueKey: UInt64] = [:]
            var claimedFromRows: [UniqueKey: UInt64] = [:]
            let failures = try container.store.uniquenessFailures(staged, in: state, Self.queue, claimed: &claimed)
            let failuresFromRows = try container.store.uniquenessFailures(
                rowsOnly, in: state, Self.queue, claimed: &claimedFromRows)
            #expect(claimed == claimedFromRows, "round \(round)")
            #expect(failures.map(\.message) == failuresFromRows.map(\.message), "round \(round)")
            #expect(failures.map(\.objectID) == failuresFromRows.map(\.objectID), "round \(round)")
            if !failures.isEmpty { clashingRounds += 1 }
        }
        #expect(clashingRounds > 10, "seed \(seed)")
        // A row staged after the tuples were taken would be missing from them: they are dropped.
        var staged = try #require(
            Self.stageInOnePass(
                [.insert(ObjectReference(entityIndex: UInt32(course), key: 1), [])], in: state))
        #expect(staged.newTuples?.count == 1)
        staged.put(key: 2, entityIndex: course, row: nil)
        #expect(staged.newTuples == nil)
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
