import Foundation
import LogFormat
import Testing

@testable import EventGraph

@Suite("One replay engine: gaps in transaction IDs, the strict and tolerant policies, foreign stores")
struct ReplayEngineTests {
    /// The IDs a crafted log holds and the gaps the library must report.
    struct GapCase: Sendable, CustomTestStringConvertible {
        var ids: [UInt64]
        var gaps: [ClosedRange<UInt64>]
        var testDescription: String { "transactions \(ids)" }
    }

    @Test(
        "a log with gaps opens read-write, reports them, and later saves continue after the last ID",
        arguments: [
            GapCase(ids: [1, 2, 4, 5], gaps: [3...3]),
            GapCase(ids: [1, 5, 6, 9], gaps: [2...4, 7...8]),
        ])
    func gapsOpenReadWrite(gapCase: GapCase) throws {
        let (ids, gaps) = (gapCase.ids, gapCase.gaps)
        let directory = TemporaryDirectory()
        let log = try CraftedSchoolLog(path: directory.file()) { log in
            ids.map { log.insertCourse(transactionID: $0, code: "C\($0)") }
        }
        let reports = LockedValue<[StoreRecoveryReport]>([])
        let container = try ModelContainer(
            path: log.path, model: log.model,
            configuration: .init(recoveryHandler: { report in reports.withLock { $0.append(report) } }))
        #expect(!container.isReadOnly)
        let report = try #require(container.recoveryReport)
        #expect(report.kind == .missingTransactions)
        #expect(report.missingTransactionIDs == gaps)
        #expect(reports.withLock { $0 } == [report], "the recovery handler hears of the gaps")
        #expect(report.description.contains(log.path), "\(report)")

        let context = container.newBackgroundContext()
        let course = Course()
        context.insert(course)
        course.code = "new"
        try context.save()
        #expect(container.lastTransactionID == ids.last! + 1)
        let digest = try container.stateDigest()
        try container.close()

        let graph = try log.toolGraph()
        #expect(graph.anomalies.isEmpty, "\(graph.anomalies)")
        #expect(graph.transactionIDGaps == gaps)
        #expect(graph.lastTransactionID == ids.last! + 1)
        #expect(graph.digest() == digest, "the library's digest is the tools' digest")
        #expect(graph.integrityIssues().isEmpty)
    }

    @Test("an operation that does not fit the state: the library refuses naming file, transaction and object")
    func strictAndTolerant() throws {
        let directory = TemporaryDirectory()
        let log = try CraftedSchoolLog(path: directory.file()) { log in
            var update = log.insertCourse(transactionID: 2, code: "ghost")
            update.operations = [
                .update(
                    ObjectReference(entityIndex: log.course, key: 99),
                    [
                        PropertyChange(
                            propertyIndex: log.property("code", of: log.course), value: .attribute(.string("x")))
                    ])
            ]
            return [
                log.insertCourse(transactionID: 1, code: "A"), update, log.insertCourse(transactionID: 3, code: "B"),
            ]
        }
        let sentence = "transaction 2 updates Course 99, which does not exist"
        do {
            _ = try ModelContainer(path: log.path, model: log.model)
            Issue.record("the library opened a log whose transaction 2 updates a missing object")
        } catch {
            #expect(error.message.contains(log.path), "\(error)")
            #expect(error.message.contains(sentence), "\(error)")
        }
        let graph = try log.toolGraph()
        #expect(graph.anomalies == [sentence], "the tools skip the operation and report it")
        #expect(graph.objectCount == 2)
        #expect(graph.integrityIssues().map(\.kind) == [.replayAnomaly])
    }

    @Test("transaction IDs that do not increase: the strict policy refuses them, the tolerant one reports them")
    func decreasingIDs() throws {
        // LogFormat's writer and scanner never let such a log through, so the engine is fed records directly.
        let empty = Changeset(transactionID: 2, commitTimeMicroseconds: 0, author: "", nextKey: 1, operations: [])
        let records: [ReplayRecord] = [
            .schema(TestModels.school.schema), .transaction(ReplayChangeset(empty), blobHandles: []),
            .transaction(ReplayChangeset(empty), blobHandles: []),
        ]
        var strict = Replayer(model: TestModels.school, untilTransaction: nil, policy: .strict, source: "crafted.eglog")
        #expect {
            for record in records { try strict.consume(record) }
        } throws: { error in
            "\(error)" == "crafted.eglog: transaction 2 follows transaction 2; IDs must increase"
        }
        var tolerant = Replayer(model: nil, untilTransaction: nil, policy: .tolerant, source: "crafted.eglog")
        for record in records { try tolerant.consume(record) }
        #expect(tolerant.anomalies == ["transaction 2 follows transaction 2; IDs must increase"])
    }

    @Test("references into other stores are localized once: the library's digest equals the tools'")
    func foreignStores() throws {
        let directory = TemporaryDirectory()
        let (x, y) = (LogUUID.random(), LogUUID.random())
        let log = try CraftedSchoolLog(path: directory.file()) { log in
            let course = log.property("course", of: log.note)
            func note(_ id: UInt64, stores: [LogUUID], storeIndex: UInt32) -> Changeset {
                Changeset(
                    transactionID: id, commitTimeMicroseconds: Int64(id), author: "", nextKey: id + 1,
                    foreignStores: stores,
                    operations: [
                        .insert(
                            ObjectReference(entityIndex: log.note, key: id),
                            [
                                PropertyChange(
                                    propertyIndex: course,
                                    value: .toOne(
                                        ObjectReference(storeIndex: storeIndex, entityIndex: log.course, key: 7)))
                            ])
                    ])
            }
            // The same foreign course, named by index 1 in the first table and index 2 in the second.
            return [note(1, stores: [x], storeIndex: 1), note(2, stores: [y, x], storeIndex: 2)]
        }
        let container = try ModelContainer(path: log.path, model: log.model)
        let store = container.store
        let targets = store.state.withLock { state in
            [UInt64(1), 2].compactMap { key -> LogUUID? in
                guard
                    case .toOne(let target?) = state.row(entityIndex: Int(log.note), key: key)?.values[
                        Int(log.property("course", of: log.note))]
                else { return nil }
                return state.storeUUID(of: target)
            }
        }
        #expect(targets == [x, x], "both notes point at the course of store \(x)")
        let digest = try container.stateDigest()
        try container.close()
        let graph = try log.toolGraph()
        #expect(graph.digest() == digest)
        // Compaction writes the state's table into the checkpoint; the rewritten log replays to the same state.
        let reopened = try ModelContainer(path: log.path, model: log.model)
        try reopened.compact()
        #expect(try reopened.stateDigest() == digest)
        try reopened.close()
        #expect(try log.toolGraph().digest() == digest)
    }
}
