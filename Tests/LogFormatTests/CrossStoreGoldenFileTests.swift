import Foundation
import Testing

@testable import LogFormat

/// The golden file of a part of a save across stores (format 1.2, changeset payload version 2): it must decode,
/// exactly, forever. Written by ``writeGoldenFile()`` (`EG_WRITE_GOLDEN=cross-store`) only when it was added; never
/// regenerated.
@Suite("Golden file of a save across stores")
struct CrossStoreGoldenFileTests {
    static let name = "v1.2-cross-store"

    /// The other store of the save.
    static let otherStoreUUID = LogUUID(string: "5EED0002-0000-4000-8000-00000000C0DE")!

    /// Transaction 1 is the 1.0 files' first (a save of one store, version 1); transaction 2 inserts a book whose
    /// author is in the other store, as one part of a save across the two stores.
    static func changeset(_ id: UInt64) -> Changeset {
        guard id == 2 else { return GoldenFileTests.changeset(1) }
        return Changeset(
            transactionID: 2, commitTimeMicroseconds: 1_700_000_002_000_000, author: "golden generator",
            nextKey: 201, foreignStores: [otherStoreUUID],
            operations: [
                .insert(
                    GoldenFileTests.book(200),
                    [
                        PropertyChange(propertyIndex: 0, value: .attribute(.string("Across"))),
                        PropertyChange(
                            propertyIndex: 3, value: .toOne(ObjectReference(storeIndex: 1, entityIndex: 0, key: 9))),
                    ])
            ],
            crossStore: CrossStoreTransaction(
                id: LogUUID(string: "5EED0003-0000-4000-8000-00000000C0DE")!,
                participants: [
                    .init(storeUUID: GoldenFileTests.storeUUID, transactionID: 2),
                    .init(storeUUID: otherStoreUUID, transactionID: 41),
                ]))
    }

    @Test("the golden file decodes to exactly its expected contents")
    func decode() throws {
        let url = try #require(
            Bundle.module.url(forResource: Self.name, withExtension: "eglog", subdirectory: "Golden"),
            "Golden/\(Self.name).eglog is missing from the test bundle")
        let reader = try LogReader(path: url.path)
        #expect(reader.header.minorVersion == 2)
        #expect(reader.header.storeUUID == GoldenFileTests.storeUUID)
        var descriptions: [String] = []
        try reader.scan { record throws in
            switch record {
            case .schema(let schema, _):
                #expect(schema == GoldenFileTests.schema)
                descriptions.append("schema")
            case .transaction(let transaction):
                let payload = try transaction.payload
                descriptions.append("transaction \(transaction.transactionID) version \(payload.first ?? 0)")
                #expect(try transaction.changeset() == Self.changeset(transaction.transactionID))
            case .seal:
                descriptions.append("seal")
            default:
                descriptions.append("unexpected \(record)")
            }
        }
        #expect(descriptions == ["schema", "transaction 1 version 1", "transaction 2 version 2", "seal"])
    }

    @Test(
        "write the cross-store golden file into the source tree",
        .enabled(if: ProcessInfo.processInfo.environment["EG_WRITE_GOLDEN"] == "cross-store"))
    func writeGoldenFile() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("golden.eglog")
        let writer = try LogWriter(path: path, options: LogWriter.Options(storeUUID: GoldenFileTests.storeUUID))
        try writer.append(schema: GoldenFileTests.schema)
        for id in 1...2 as ClosedRange<UInt64> {
            try writer.appendTransaction(id: id, payload: try Self.changeset(id).encoded())
        }
        try writer.close()
        let destination = GoldenFileTests.goldenDirectory.appendingPathComponent("\(Self.name).eglog")
        try Data(try LogFileSurgery.bytes(of: path)).write(to: destination)
    }
}
