import LogFormat
import TestSupport
import Testing

@testable import EventGraph

/// Saves that write no indexed value (a post's title, a relate through a relationship no index reads) leave the
/// indexes as they are, with one exception of the tolerant replay: an object whose unique tuple another object took
/// (a duplicate insert the tolerant replay let through) takes it back, as installing its update would give it. The
/// in-place replay skips building the new values of such an object for the indexes; it must still come out as the
/// staged replay builds them.
@Suite("Replaying in place: the indexes after saves that write no indexed value")
struct InPlaceReplayIndexReadTests {
    static let model = TestModels.school

    static func reference(_ entity: String, _ key: UInt64) -> ObjectReference {
        ObjectReference(entityIndex: UInt32(model.entities.first { $0.name == entity }!.index), key: key)
    }

    static func property(_ name: String, of entity: String) -> UInt32 {
        UInt32(model.entities.first { $0.name == entity }!.properties.firstIndex { $0.name == name }!)
    }

    static func set(_ name: String, of entity: String, _ value: AttributeValue) -> PropertyChange {
        PropertyChange(propertyIndex: property(name, of: entity), value: .attribute(value))
    }

    /// Two courses with one code (the second insert tolerated, the tuple its), then saves that write no indexed
    /// value: a course's credits, a student's year, a relate of each through a relationship no index reads.
    static var records: [ReplayRecord] {
        let operations: [[ChangeOperation]] = [
            [
                .insert(reference("Course", 1), [set("code", of: "Course", .string("X"))]),
                .insert(reference("Student", 2), [set("name", of: "Student", .string("ada"))]),
            ],
            [.insert(reference("Course", 3), [set("code", of: "Course", .string("X"))])],
            [.update(reference("Course", 1), [set("credits", of: "Course", .int32(7))])],
            [.update(reference("Student", 2), [set("year", of: "Student", .int16(4))])],
            [
                .relate(
                    reference("Student", 2), propertyIndex: property("courses", of: "Student"),
                    added: [reference("Course", 1)], removed: [])
            ],
            [
                .relate(
                    reference("Course", 3), propertyIndex: property("members", of: "Course"),
                    added: [reference("Student", 2)], removed: [])
            ],
            // An update of an object that does not exist, refused: nothing of it enters the indexes.
            [.update(reference("Student", 9), [set("year", of: "Student", .int16(2))])],
        ]
        var records: [ReplayRecord] = [.schema(model.schema)]
        for (index, operations) in operations.enumerated() {
            let changeset = Changeset(
                transactionID: UInt64(index + 1), commitTimeMicroseconds: Int64(index) * 1000, author: "crafted",
                nextKey: 10, operations: operations)
            records.append(.transaction(ReplayChangeset(changeset), blobHandles: []))
        }
        return records
    }

    @Test("the indexes come out as the staged replay builds them; a tuple held by another object is given back")
    func sameIndexesAsStaged() throws {
        var inPlace = Replayer(model: nil, untilTransaction: nil, policy: .tolerant, buildsIndexes: true, source: "x")
        var staged = Replayer(
            model: nil, untilTransaction: nil, policy: .tolerant, buildsIndexes: true, source: "x",
            appliesInPlace: false)
        // The holder of the code after each record (the schema, then transactions 1–7).
        var holders: [[UInt64]] = []
        for record in Self.records {
            try inPlace.consume(record)
            try staged.consume(record)
            holders.append(Array(try #require(inPlace.state).uniqueIndex.values))
            #expect(holders.last == Array(try #require(staged.state).uniqueIndex.values))
        }
        let (a, b) = (try #require(inPlace.state), try #require(staged.state))
        // The second insert takes the code; the first course takes it back when its credits change, the second
        // when a member is added to it; the student's saves and the refused update leave it where it is.
        #expect(holders == [[], [1], [3], [1], [1], [1], [3], [3]])
        #expect(inPlace.anomalies == staged.anomalies)
        #expect(InPlaceReplayTests.snapshot(of: a) == InPlaceReplayTests.snapshot(of: b))
        #expect(a.digest(model: inPlace.model!) == b.digest(model: staged.model!))
        let student = Int(Self.reference("Student", 2).entityIndex)
        #expect("\(a.indexes[student])".contains("ada"), "the student's name stays in its index")
    }
}
