import LogFormat
import Testing

/// The small public API for direct users of the log (the README's "Using the log directly" and the Benchmarks'
/// `LogThroughput`, which cannot see `package` declarations): scanning transactions and counting syncs.
@Suite("Direct log API")
struct DirectLogAPITests {
    @Test("scanTransactions delivers the committed transactions in order and nothing else")
    func scanTransactions() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store.eglog")
        let writer = try LogWriter(path: path)
        try writer.append(schema: PayloadFixtures.schema)
        try writer.appendTransaction(id: 1, payload: [1], blobs: [[7, 7, 7]])
        try writer.appendTransaction(id: 2, payload: [2, 2])
        try writer.close()

        var delivered: [(UInt64, [UInt8])] = []
        let report = try LogReader(path: path).scanTransactions { delivered.append(($0.transactionID, try $0.payload)) }
        #expect(delivered.map(\.0) == [1, 2])
        #expect(delivered.map(\.1) == [[1], [2, 2]])
        #expect(report.transactionCount == 2)
        #expect(report.tail == .clean)

        var fromSecond: [UInt64] = []
        try LogReader(path: path).scanTransactions(fromTransactionID: 2) { fromSecond.append($0.transactionID) }
        #expect(fromSecond == [2])
    }

    @Test(
        "syncCount counts the fdatasync calls of appends",
        arguments: [(Durability.full, 5), (.none, 0)])
    func syncCount(durability: Durability, expectedSyncs: Int) throws {
        let directory = TemporaryDirectory()
        let faults = FaultInjector()
        var options = LogWriter.Options(durability: durability)
        options.faultInjector = faults
        let writer = try LogWriter(path: directory.file("store.eglog"), options: options)
        let fileSyncsBefore = faults.callCount(.sync)
        #expect(writer.syncCount == 0)
        for id in 1...5 as ClosedRange<UInt64> { try writer.appendTransaction(id: id, payload: [UInt8(id)]) }
        try writer.sync()
        #expect(writer.syncCount == expectedSyncs)
        #expect(writer.syncCount == faults.callCount(.sync) - fileSyncsBefore, "one count per sync the file saw")
    }
}
