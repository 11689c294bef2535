import EventGraph
import Foundation
import Testing

private final class Student: ManagedObject {
    @Attribute var number: Int64 = 0
}

/// `egctl inspect` and `egctl dump --counters` show a store's named counters (sequence generators) with the last
/// value each handed out, from the log's transactions and from a checkpoint alike.
@Suite("egctl shows named counters")
struct EgctlCounterTests {
    static let model = try! ObjectModel(name: "School", types: [Student.self])

    /// A store whose `studentID` counter handed out 1–3 and `roomID` 1; compacted when `compacting`.
    static func school(in scratch: Scratch, compacting: Bool) throws -> String {
        let path = scratch.file("school.eglog")
        let container = try ModelContainer(path: path, model: model)
        let context = container.newBackgroundContext()
        for _ in 0..<3 {
            let student = Student()
            context.insert(student)
            student.number = try container.nextValue(of: "studentID")
        }
        try context.save()
        _ = try container.nextValue(of: "roomID")
        if compacting { _ = try container.compact() }
        try container.close()
        return path
    }

    @Test(arguments: [false, true])
    func inspectAndDumpListEveryCounterWithItsLastValue(compacting: Bool) throws {
        let scratch = Scratch()
        let path = try Self.school(in: scratch, compacting: compacting)
        let expected = [["name": "roomID", "lastValue": 1], ["name": "studentID", "lastValue": 3]]

        let inspect = try Egctl.run("inspect", path, "--json").json()
        let counters = try #require(inspect["counters"] as? [[String: Any]])
        #expect(counters.map { $0["name"] as? String } == expected.map { $0["name"] as? String })
        #expect(counters.map { $0["lastValue"] as? Int } == expected.map { $0["lastValue"] as? Int })
        let text = try Egctl.run("inspect", path).stdout
        #expect(text.contains("counters     2"), "\(text)")
        #expect(text.contains("  studentID: last value 3"), "\(text)")

        let dump = try Egctl.run("dump", path, "--counters", "--format", "json")
        #expect(dump.status == 0, "\(dump.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["name"] as? String } == ["roomID", "studentID"])
        #expect(rows.map { $0["lastValue"] as? Int } == [1, 3])
        #expect(try Egctl.run("dump", path, "--counters").stdout == "roomID = 1\nstudentID = 3\n")
        #expect(
            try Egctl.run("dump", path, "--counters", "--format", "csv").stdout
                == "name,lastValue\nroomID,1\nstudentID,3\n")
    }

    @Test func dumpTakesEitherAnEntityOrCounters() throws {
        let scratch = Scratch()
        let path = try Self.school(in: scratch, compacting: false)
        #expect(try Egctl.run("dump", path).status == 2)
        #expect(try Egctl.run("dump", path, "--entity", "Student", "--counters").status == 2)
        let students = try Egctl.run("dump", path, "--entity", "Student", "--format", "json")
        #expect(students.status == 0, "\(students.stderr)")
    }
}
