import LogFormat
import Testing

@testable import EventGraph

/// Replaying a transaction that writes no value an index reads (a course's credits, a relate of its members) keeps
/// the object's index entries without decoding its indexed values twice; the indexes must still end as staging and
/// installing the transaction leaves them, including the uniqueness holder of a tuple two objects share (a log the
/// tools read tolerantly may hold such a pair: the last object written holds the tuple).
@Suite("Replay keeps the index entries of objects whose indexed values it did not write")
struct ReplayIndexUpkeepTests {
    static let model = TestModels.school

    static func entity(_ name: String) -> UInt32 { UInt32(model.entities.first { $0.name == name }!.index) }
    static func property(_ name: String, of entity: String) -> UInt32 {
        UInt32(model.entities[Int(self.entity(entity))].properties.firstIndex { $0.name == name }!)
    }
    static func reference(_ entity: String, _ key: UInt64) -> ObjectReference {
        ObjectReference(entityIndex: self.entity(entity), key: key)
    }
    static func set(_ name: String, of entity: String, _ value: AttributeValue) -> PropertyChange {
        PropertyChange(propertyIndex: property(name, of: entity), value: .attribute(value))
    }

    /// Courses 1 and 2 share the code "C1" (2 written last); then single-operation transactions that write no
    /// indexed value of one of them, or one that does, alternate.
    static let changesets: [Changeset] = {
        var operations: [[ChangeOperation]] = [
            [
                .insert(reference("Course", 1), [set("code", of: "Course", .string("C1"))]),
                .insert(reference("Course", 2), [set("code", of: "Course", .string("C1"))]),
                .insert(reference("Student", 3), [set("name", of: "Student", .string("Ada"))]),
            ],
            // Credits of course 1: not indexed, but course 1 takes the shared tuple back, as staging does.
            [.update(reference("Course", 1), [set("credits", of: "Course", .int32(7))])],
            // A relate of course 2's members: not indexed either; course 2 takes the tuple.
            [
                .relate(
                    reference("Course", 2), propertyIndex: property("members", of: "Course"),
                    added: [reference("Student", 3)], removed: [])
            ],
            // The student's year (not indexed), then its name (indexed), then both in one operation.
            [.update(reference("Student", 3), [set("year", of: "Student", .int16(4))])],
            [.update(reference("Student", 3), [set("name", of: "Student", .string("Grace"))])],
            [
                .update(
                    reference("Student", 3),
                    [set("year", of: "Student", .int16(5)), set("name", of: "Student", .string("Hopper"))])
            ],
            // Course 1's code changes: course 2 keeps "C1"'s entry only if it held it.
            [.update(reference("Course", 1), [set("code", of: "Course", .string("C9"))])],
            [.update(reference("Course", 2), [set("credits", of: "Course", .int32(3))])],
        ]
        operations.append([.delete(reference("Course", 2))])
        return operations.enumerated().map { index, operations in
            Changeset(
                transactionID: UInt64(index + 1), commitTimeMicroseconds: Int64(index) * 1000, author: "test",
                nextKey: 10, operations: operations)
        }
    }()

    /// The key holding the uniqueness tuple of a course code.
    static func holder(of code: String, in state: StoreState) -> UInt64? {
        state.uniqueIndex.first { $0.key.values == [.string(code)] }?.value
    }

    @Test("after each transaction: the same uniqueness holders, attribute indexes and digest as staging")
    func sameIndexesAsStaging() throws {
        for policy in [ReplayPolicy.tolerant, .strict] {
            var inPlace = Replayer(model: Self.model, untilTransaction: nil, policy: policy, source: "test")
            var staged = Replayer(
                model: Self.model, untilTransaction: nil, policy: policy, source: "test", appliesInPlace: false)
            try inPlace.consume(.schema(Self.model.schema))
            try staged.consume(.schema(Self.model.schema))
            var holders: [UInt64?] = []
            for changeset in Self.changesets {
                try inPlace.consume(.transaction(ReplayChangeset(changeset), blobHandles: []))
                try staged.consume(.transaction(ReplayChangeset(changeset), blobHandles: []))
                let (a, b) = (try #require(inPlace.state), try #require(staged.state))
                #expect(InPlaceReplayTests.snapshot(of: a) == InPlaceReplayTests.snapshot(of: b))
                #expect(a.digest(model: Self.model) == b.digest(model: Self.model))
                holders.append(Self.holder(of: "C1", in: a))
            }
            // Who holds "C1" after each transaction: 2 (written last), 1 (credits), 2 (members), … , 2 after
            // course 1's code moved away, none once course 2 is deleted.
            #expect(holders == [2, 1, 2, 2, 2, 2, 2, 2, nil])
            let state = try #require(inPlace.state)
            let nameIndex = try #require(
                state.indexes[Int(Self.entity("Student"))].first {
                    $0.propertyIndex == Int(Self.property("name", of: "Student"))
                })
            func named(_ name: String) -> IndexRange {
                IndexRange(
                    lower: .init(value: .string(name), isInclusive: true),
                    upper: .init(value: .string(name), isInclusive: true))
            }
            #expect(nameIndex.keys(in: named("Hopper"), limit: 10) == [3])
            #expect(nameIndex.keys(in: named("Ada"), limit: 10) == [])
        }
    }
}
