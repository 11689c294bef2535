import LogFormat
import Testing

@testable import EventGraph

/// The graph checks `egctl verify` runs (`LogGraph.integrityIssues`), on logs written with LogFormat's writer so that
/// they break the rules the library never breaks: an inverse that does not point back, a reference to an object that
/// does not exist, two objects sharing a unique value.
@Suite("Integrity checks of a replayed graph: inverses, dangling references, uniqueness")
struct IntegrityCheckTests {
    /// An insert of object `key` of `entity` with the given values (its transaction ID is set by `transaction`).
    static func insert(_ entity: UInt32, _ key: UInt64, _ values: [PropertyChange]) -> ChangeOperation {
        .insert(ObjectReference(entityIndex: entity, key: key), values)
    }

    /// One transaction holding `operations`; keys up to 1,000 are the test's own.
    static func transaction(_ id: UInt64, _ operations: [ChangeOperation]) -> Changeset {
        Changeset(
            transactionID: id, commitTimeMicroseconds: Int64(id), author: "crafted", nextKey: 1_000,
            operations: operations)
    }

    /// A course with `code` and the notes it lists.
    static func course(_ log: CraftedSchoolLog, _ key: UInt64, code: String, notes: [UInt64] = []) -> ChangeOperation {
        insert(
            log.course, key,
            [
                PropertyChange(propertyIndex: log.property("code", of: log.course), value: .attribute(.string(code))),
                PropertyChange(
                    propertyIndex: log.property("notes", of: log.course),
                    value: .toMany(notes.map { ObjectReference(entityIndex: log.note, key: $0) })),
            ])
    }

    /// A note whose course is `course` (nil: none).
    static func note(_ log: CraftedSchoolLog, _ key: UInt64, course: UInt64?) -> ChangeOperation {
        insert(
            log.note, key,
            [
                PropertyChange(
                    propertyIndex: log.property("course", of: log.note),
                    value: .toOne(course.map { ObjectReference(entityIndex: log.course, key: $0) }))
            ])
    }

    @Test("a consistent graph has no issues, with a list short enough to search and one long enough to hash")
    func consistent() throws {
        let directory = TemporaryDirectory()
        let log = try CraftedSchoolLog(path: directory.file()) { log in
            [
                Self.transaction(
                    1,
                    [
                        Self.course(log, 1, code: "SHORT", notes: [10, 11]),
                        Self.course(log, 2, code: "LONG", notes: Array(100..<140)),
                    ]
                        + [10, 11].map { Self.note(log, $0, course: 1) }
                        + (100..<140).map { Self.note(log, $0, course: 2) }
                        + [Self.note(log, 12, course: nil)])
            ]
        }
        let graph = try log.toolGraph()
        #expect(graph.anomalies.isEmpty, "\(graph.anomalies)")
        #expect(graph.objectCount == 45)
        #expect(graph.integrityIssues().isEmpty, "\(graph.integrityIssues())")
    }

    @Test("an inverse that does not point back is named from each side, in a short list and in a long one")
    func inverseMismatch() throws {
        let directory = TemporaryDirectory()
        // Course 1 lists note 10, whose course is course 2 (which does not list it); course 3 lists notes 100–139,
        // of which note 139's course is none.
        let log = try CraftedSchoolLog(path: directory.file()) { log in
            [
                Self.transaction(
                    1,
                    [
                        Self.course(log, 1, code: "A", notes: [10]), Self.course(log, 2, code: "B"),
                        Self.course(log, 3, code: "C", notes: Array(100..<140)), Self.note(log, 10, course: 2),
                    ] + (100..<139).map { Self.note(log, $0, course: 3) } + [Self.note(log, 139, course: nil)])
            ]
        }
        let issues = try log.toolGraph().integrityIssues()
        #expect(
            issues.map(\.description).sorted() == [
                "inverse-mismatch: Course #1.notes → Note #10, but Note #10.course does not point back",
                "inverse-mismatch: Course #3.notes → Note #139, but Note #139.course does not point back",
                "inverse-mismatch: Note #10.course → Course #2, but Course #2.notes does not point back",
            ], "\(issues)")
    }

    @Test("a reference to an object that does not exist is dangling")
    func danglingReference() throws {
        let directory = TemporaryDirectory()
        let log = try CraftedSchoolLog(path: directory.file()) { log in
            [
                Self.transaction(
                    1,
                    [
                        Self.course(log, 1, code: "A", notes: [10, 77]), Self.note(log, 10, course: 1),
                        Self.note(log, 11, course: 99),
                    ])
            ]
        }
        let issues = try log.toolGraph().integrityIssues()
        #expect(
            issues.map(\.description).sorted() == [
                "dangling-reference: Course #1.notes → missing Note #77",
                "dangling-reference: Note #11.course → missing Course #99",
            ], "\(issues)")
    }

    @Test("two objects sharing a unique value violate uniqueness; null values never do")
    func uniquenessViolation() throws {
        let directory = TemporaryDirectory()
        let log = try CraftedSchoolLog(path: directory.file()) { log in
            [
                Self.transaction(1, [Self.course(log, 1, code: "SAME"), Self.course(log, 2, code: "OTHER")]),
                Self.transaction(2, [Self.course(log, 3, code: "SAME")]),
                // Two courses whose code is null (a crafted log can say so): nulls are never equal.
                Self.transaction(
                    3,
                    [4, 5].map { key in
                        Self.insert(
                            log.course, UInt64(key),
                            [
                                PropertyChange(
                                    propertyIndex: log.property("code", of: log.course), value: .attribute(.null))
                            ])
                    }),
            ]
        }
        let issues = try log.toolGraph().integrityIssues()
        #expect(issues.map(\.description) == ["uniqueness-violation: Course #3 and Course #1 share code"], "\(issues)")
    }

    @Test("the issues stop at the limit")
    func limit() throws {
        let directory = TemporaryDirectory()
        let log = try CraftedSchoolLog(path: directory.file()) { log in
            [Self.transaction(1, (10..<20).map { Self.note(log, $0, course: 99) })]
        }
        let graph = try log.toolGraph()
        #expect(graph.integrityIssues().count == 10)
        #expect(graph.integrityIssues(limit: 3).map(\.kind) == Array(repeating: .danglingReference, count: 3))
    }
}
