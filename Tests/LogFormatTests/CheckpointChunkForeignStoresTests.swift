import Foundation
import Testing

@testable import LogFormat

/// `CheckpointChunk.foreignStores(ofPayload:)`: the table of foreign stores a chunk payload begins with, read without
/// its records (what a store's open needs of a compacted checkpoint's first chunk; its records are decoded and
/// checked on first touch). The envelope's checks (size, version byte) and the table's own are those of a full
/// decoding; what follows the table is not read.
@Suite("A checkpoint chunk's table of foreign stores, read alone")
struct CheckpointChunkForeignStoresTests {
    static let storeC = LogUUID(high: 0x5EED, low: 0xC)

    @Test func theTableIsTheOneAFullDecodingReads() throws {
        for chunk in [
            PayloadFixtures.checkpointChunk,
            CheckpointChunk(records: []),
            CheckpointChunk(foreignStores: [PayloadFixtures.storeB, Self.storeC], records: []),
        ] {
            let bytes = try chunk.encoded()
            #expect(try CheckpointChunk.foreignStores(ofPayload: bytes) == chunk.foreignStores)
            #expect(try CheckpointChunk(decoding: bytes).foreignStores == chunk.foreignStores)
        }
    }

    @Test func recordsThatDoNotDecodeAreLeftToTheFullDecoding() throws {
        let chunk = PayloadFixtures.checkpointChunk
        let bytes = try chunk.encoded()
        // The version byte, one foreign store (a count and 16 bytes), then the records: cut inside the records.
        let tableEnd = 1 + 1 + 16
        for cut in [tableEnd, tableEnd + 1, bytes.count - 1] {
            let truncated = Array(bytes[..<cut])
            #expect(try CheckpointChunk.foreignStores(ofPayload: truncated) == chunk.foreignStores, "cut at \(cut)")
            #expect(throws: LogFormatError.self, "cut at \(cut)") { try CheckpointChunk(decoding: truncated) }
        }
    }

    @Test func theEnvelopeAndTheTableAreChecked() throws {
        let bytes = try PayloadFixtures.checkpointChunk.encoded()
        let empty = #expect(throws: LogFormatError.self) { try CheckpointChunk.foreignStores(ofPayload: []) }
        #expect(empty?.code == .malformedPayload)

        var newer = bytes
        newer[0] = PayloadEnvelope.currentVersion + 1
        let version = #expect(throws: LogFormatError.self) { try CheckpointChunk.foreignStores(ofPayload: newer) }
        #expect(version?.code == .unsupportedVersion)

        // The table announces one store but holds 15 of its 16 bytes.
        let shortTable = Array(bytes[..<(1 + 1 + 15)])
        let short = #expect(throws: LogFormatError.self) { try CheckpointChunk.foreignStores(ofPayload: shortTable) }
        #expect(short?.code == .malformedPayload)

        // A count no payload of this size can hold is refused before anything is allocated for it.
        let huge = [PayloadEnvelope.currentVersion] + [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]
        let count = #expect(throws: LogFormatError.self) { try CheckpointChunk.foreignStores(ofPayload: huge) }
        #expect(count?.code == .malformedPayload)
    }
}
