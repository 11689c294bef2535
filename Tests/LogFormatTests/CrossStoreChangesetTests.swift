import Testing

@testable import LogFormat

/// The changeset of one part of a save across stores (payload version 2, `Docs/FileFormat-Payloads.md` §5.5), and
/// the writer calls such a save needs (`Docs/FileFormat.md` §3.6).
@Suite("Changesets of saves across stores")
struct CrossStoreChangesetTests {
    static func uuid(_ last: UInt64) -> LogUUID { LogUUID(high: 0, low: last) }

    /// The spec's example changeset as a part of save 00…01 with participants 00…0A (transaction 7) and 00…0B (3).
    static let record = CrossStoreTransaction(
        id: uuid(1),
        participants: [
            .init(storeUUID: uuid(0x0A), transactionID: 7), .init(storeUUID: uuid(0x0B), transactionID: 3),
        ])

    static func example(crossStore: CrossStoreTransaction?) -> Changeset {
        Changeset(
            transactionID: 7, commitTimeMicroseconds: -1, author: "me", nextKey: 300,
            operations: [
                .insert(
                    ObjectReference(entityIndex: 2, key: 299),
                    [
                        PropertyChange(propertyIndex: 0, value: .attribute(.string("Hi"))),
                        PropertyChange(propertyIndex: 1, value: .attribute(.bool(true))),
                        PropertyChange(propertyIndex: 4, value: .toOne(ObjectReference(entityIndex: 1, key: 5))),
                    ]),
                .delete(ObjectReference(entityIndex: 1, key: 6)),
            ], crossStore: crossStore)
    }

    /// The bytes of the spec's example, with `record` after the foreign stores and version byte 2.
    static let exampleBytes: [UInt8] =
        [0x02, 0x07, 0x01, 0x02, 0x6D, 0x65, 0xAC, 0x02, 0x00]
        + uuid(1).bytes + [0x02] + uuid(0x0A).bytes + [0x07] + uuid(0x0B).bytes + [0x03]
        + [
            0x02, 0x01, 0x00, 0x02, 0xAB, 0x02, 0x03, 0x00, 0x08, 0x02, 0x48, 0x69, 0x01, 0x07, 0x04, 0x21, 0x00, 0x01,
            0x05, 0x04, 0x00, 0x01, 0x06,
        ]

    @Test("a part of a save across stores has the bytes the spec shows, and decodes to the same changeset")
    func exactBytes() throws {
        #expect(Self.exampleBytes.count == 32 + 51)
        #expect(try Self.example(crossStore: Self.record).encoded() == Self.exampleBytes)
        #expect(try Changeset(decoding: Self.exampleBytes) == Self.example(crossStore: Self.record))
    }

    @Test("a changeset of one store stays version 1, byte for byte")
    func oneStoreStaysVersionOne() throws {
        let bytes = try Self.example(crossStore: nil).encoded()
        #expect(bytes.first == 1)
        #expect(bytes.count == 32)
        #expect(try Changeset(decoding: bytes).crossStore == nil)
    }

    /// Byte offset of the participant count in ``exampleBytes`` (after the version … foreign stores and the id).
    static let countOffset = 9 + 16

    /// Ways a cross-store record breaks the one encoding each record has.
    enum Damage: String, CaseIterable, CustomStringConvertible {
        case oneParticipant, participantsOutOfOrder, sameStoreTwice, transactionIDZero

        var description: String { rawValue }

        func apply(to bytes: inout [UInt8]) {
            let count = CrossStoreChangesetTests.countOffset
            switch self {
            case .oneParticipant:
                bytes[count] = 1
                bytes.removeSubrange(count + 18..<count + 35)
            case .participantsOutOfOrder:
                bytes[count + 16] = 0x0C
            case .sameStoreTwice:
                bytes[count + 33] = 0x0A
            case .transactionIDZero:
                bytes[count + 17] = 0x00
            }
        }

        /// Where the decoder reports it: the count, the second participant's UUID, or the bad ID.
        var byteOffset: Int {
            let count = CrossStoreChangesetTests.countOffset
            return switch self {
            case .oneParticipant: count
            case .participantsOutOfOrder, .sameStoreTwice: count + 18
            case .transactionIDZero: count + 17
            }
        }
    }

    @Test("a record that is not canonical is malformed, at the byte where it goes wrong", arguments: Damage.allCases)
    func malformedRecord(_ damage: Damage) throws {
        var bytes = Self.exampleBytes
        damage.apply(to: &bytes)
        let error = #expect(throws: LogFormatError.self) { try Changeset(decoding: bytes) }
        #expect(error?.code == .malformedPayload)
        #expect(error?.byteOffset == UInt64(damage.byteOffset), "\(error?.message ?? "")")
    }

    @Test("a changeset version newer than 3 is refused as unsupported, not as damage")
    func newerVersion() throws {
        var bytes = Self.exampleBytes
        bytes[0] = 4
        let error = #expect(throws: LogFormatError.self) { try Changeset(decoding: bytes) }
        #expect(error?.code == .unsupportedVersion)
    }

    @Test("the writer cuts the last transaction off, and the next one takes its ID and sequence number")
    func discardLastTransaction() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("log.eglog")
        let writer = try LogWriter(path: path)
        // The file's size is not the end of the data: the writer keeps zeros ahead of it (h54).
        let endOfFirst = try writer.appendTransaction(id: 1, payload: TestLog.payload(for: 1)).endByteOffset
        let second = try writer.appendTransaction(id: 2, payload: TestLog.payload(for: 2), blobs: [[1, 2, 3]])
        #expect(second.byteOffset == endOfFirst, "the blob is the transaction's first frame")

        #expect(throws: LogFormatError.self, "only the last transaction") {
            try writer.discardLastTransaction(1, startingAt: 1024, previousTransactionID: 0)
        }
        #expect(throws: LogFormatError.self, "only where the transaction starts") {
            try writer.discardLastTransaction(2, startingAt: second.endByteOffset - 8, previousTransactionID: 1)
        }
        try writer.discardLastTransaction(2, startingAt: second.byteOffset, previousTransactionID: 1)
        #expect(try LogFileSurgery.size(of: path) == endOfFirst)
        try writer.appendTransaction(id: 2, payload: TestLog.payload(for: 20))
        try writer.close()

        let replay = try Replay.read(path)
        #expect(
            replay.transactions == [
                ReplayedTransaction(id: 1, payload: TestLog.payload(for: 1)),
                ReplayedTransaction(id: 2, payload: TestLog.payload(for: 20)),
            ])
        #expect(replay.report.tail == .clean)
    }

    @Test("a poisoned writer refuses appends and closes without a seal")
    func poisonRefusesAppendsAndTheSeal() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("log.eglog")
        let writer = try LogWriter(path: path)
        try writer.appendTransaction(id: 1, payload: TestLog.payload(for: 1))
        writer.poison(because: "another store's part failed")
        let refused = #expect(throws: LogFormatError.self) {
            try writer.appendTransaction(id: 2, payload: TestLog.payload(for: 2))
        }
        #expect(refused?.code == .poisoned)
        #expect(refused?.message.contains("another store's part failed") == true)
        #expect(throws: LogFormatError.self) { try writer.close() }
        #expect(try Replay.read(path).report.endsWithSeal == false)
    }
}
