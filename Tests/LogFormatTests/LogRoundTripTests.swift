import Testing

@testable import LogFormat

@Suite("Log round trips")
struct LogRoundTripTests {
    @Test("append, close, reopen and replay transactions of every size", arguments: [Durability.full, .normal, .none])
    func roundTrip(durability: Durability) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("store.eglog")
        let payloads: [[UInt8]] = [
            [], [1, 2, 3], Array(repeating: 7, count: 5000),
            (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) },
        ]
        do {
            let writer = try LogWriter(path: path, options: .init(durability: durability))
            #expect(writer.recoveryReport.created)
            for (index, payload) in payloads.enumerated() {
                try writer.appendTransaction(
                    id: UInt64(index + 1), payload: payload, blobs: index == 2 ? [[9, 9]] : [])
            }
            try writer.close()
        }
        var seen: [(UInt64, [UInt8], Int)] = []
        let reader = try LogReader(path: path)
        let report = try reader.scan { record in
            if case .transaction(let t) = record { seen.append((t.transactionID, try t.payload, t.blobs.count)) }
        }
        #expect(report.tail == .clean)
        #expect(report.endsWithSeal)
        #expect(seen.map(\.0) == [1, 2, 3, 4])
        #expect(seen.map(\.1) == payloads)
        #expect(seen.map(\.2) == [0, 0, 1, 0])

        let writer = try LogWriter(path: path)
        #expect(writer.recoveryReport.truncatedTail == nil)
        #expect(writer.lastTransactionID == 4)
        try writer.appendTransaction(id: 5, payload: [5])
        try writer.close()
        #expect(try LogReader(path: path).scan().transactionCount == 5)
    }
}
