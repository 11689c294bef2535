import Foundation
import Testing

@testable import LogFormat

/// A checkpoint entity chunk whose frame checksums are right (forged, as anyone who has read the format can, or
/// written so by a buggy writer) and whose content is wrong. The library reads such a chunk lazily, on first touch,
/// and a caller that cannot throw ends the process there; the tools must not. The tools read a checkpoint as the
/// library does (one engine): their scan checksums every entity chunk's body, and `LogGraph` adopts the directory
/// and decodes every chunk with the library's chunk decoder and its checks when the checkpoint ends, throwing the
/// error of a damaged one; a tool's state then holds no unloaded chunk (its `digest()`, `forEachRow` and `row` never
/// load one). A payload that does not decode, and one that decodes to objects its directory entry does not list (a
/// wrong entity, a key outside the entry's range), stop every command with an error naming the file, the chunk's
/// number and entity and its byte offset. Every command exits with a status, none by a signal. (A guard: it fails if
/// the tools start loading chunks lazily without making those reads throw.)
@Suite("egctl on a checkpoint chunk whose checksums are right and whose content is wrong")
struct EgctlInvalidChunkTests {
    /// A compacted demo store at `path` whose entity chunk stored raw (not compressed) has `edit` applied to its
    /// payload (the payload's byte count must stay the same), both checksums forged to match; that chunk's byte
    /// offset, and its number and entity as the checkpoint's directory lists them ("chunk 2 of entity Post").
    @discardableResult
    static func storeWithAnInvalidChunk(at path: String, edit: (inout [UInt8]) throws -> Void) throws -> (
        byteOffset: UInt64, chunk: String
    ) {
        let demo = try Egctl.run("demo", path, "--posts", "5000", "--seed", "3")
        try #require(demo.status == 0, "\(demo.stderr)")
        let compact = try Egctl.run("compact", path)
        try #require(compact.status == 0, "\(compact.stderr)")

        let reader = try LogReader(path: path)
        let seed = reader.header.checksumSeed
        var directory: CheckpointDirectory?
        var entityNames: [String] = []
        try reader.scan { record in
            if case .checkpointDirectory(let found, _) = record { directory = found }
            if case .schema(let schema, _) = record { entityNames = schema.entities.map(\.name) }
        }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let chunks = try #require(directory?.allChunks)
        let offset = try #require(chunks.first { bytes[Int($0.byteOffset) + 5] == FrameCodec.raw.rawValue }).byteOffset
        let start = Int(offset)
        let bodyCount = Int(UInt32(bytes[start]) | UInt32(bytes[start + 1]) << 8 | UInt32(bytes[start + 2]) << 16)
        let body = start + FrameHeader.byteCount
        var payload = Array(bytes[body..<body + bodyCount])
        try edit(&payload)
        try #require(payload.count == bodyCount)
        bytes.replaceSubrange(body..<body + bodyCount, with: payload)
        func store(_ value: UInt32, at position: Int) {
            for byte in 0..<4 { bytes[position + byte] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(byte))) }
        }
        store(CRC32C.checksum(payload, continuing: seed), at: start + 36)
        store(CRC32C.checksum(Array(bytes[start..<start + 44]), continuing: seed), at: start + 44)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let entity = try #require(directory?.entities.first { $0.chunks.contains { $0.byteOffset == offset } })
        let chunkIndex = try #require(entity.chunks.firstIndex { $0.byteOffset == offset })
        return (offset, "chunk \(chunkIndex) of entity \(entityNames[Int(entity.entityIndex)])")
    }

    /// The payload offset of the first record's entity index and key: after the version, an empty foreign store
    /// list, the record count and the store index (one byte each, or the count's varint).
    static func firstRecord(_ payload: [UInt8]) throws -> (entityIndex: Int, key: Int) {
        try #require(payload[0] == 1 && payload[1] == 0, "version 1, no foreign store")
        var position = 2
        while payload[position] & 0x80 != 0 { position += 1 }
        position += 1  // the record count
        try #require(payload[position] == 0, "store index 0")
        return (position + 1, position + 2)
    }

    /// Every command that reads a store, on `path` (`compact` on a copy).
    static func commands(_ path: String, scratch: Scratch) throws -> [[String]] {
        let copy = scratch.file("compacted.eglog")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        return [
            ["verify", path], ["verify", path, "--json"], ["replay", path, "--summary"], ["replay", path, "--json"],
            ["inspect", path], ["dump", path, "--entity", "Post"], ["dump", path, "--entity", "Category"],
            ["history", path, "eventgraph:///Post/5"], ["compact", copy],
        ]
    }

    @Test func aPayloadThatDoesNotDecodeStopsEveryCommandNamingTheChunk() throws {
        let scratch = Scratch()
        let path = scratch.file("invalid-chunk.eglog")
        // The first record names store 5 of a chunk that lists no foreign store.
        let (offset, chunk) = try Self.storeWithAnInvalidChunk(at: path) { payload in
            let store = try Self.firstRecord(payload).entityIndex - 1
            payload[store] = 5
        }
        for arguments in try Self.commands(path, scratch: scratch) {
            let command = arguments.filter { !$0.hasPrefix("/") }.joined(separator: " ")
            let result = try MeasuredProcess.run(Egctl.executable.path, arguments)
            #expect(result.exitStatus.map { $0 != 0 } == true, "egctl \(command): \(result)")
            let output = result.stderr + result.stdout
            #expect(output.contains("byte offset \(offset)"), "egctl \(command): \(output)")
            #expect(output.contains("store index 5"), "egctl \(command): \(output)")
            // The directory that names the chunk's entity comes after the chunk: the error waits for it (h86).
            #expect(output.contains(chunk), "egctl \(command): \(output)")
        }
    }

    @Test(arguments: ["entity index", "key"])
    func aPayloadThatDecodesToObjectsItsDirectoryDoesNotListStopsEveryCommandNamingTheChunk(field: String) throws {
        let scratch = Scratch()
        let path = scratch.file("wrong-chunk.eglog")
        let (offset, chunk) = try Self.storeWithAnInvalidChunk(at: path) { payload in
            let record = try Self.firstRecord(payload)
            if field == "key" {
                payload[record.key] = payload[record.key] & 0x80 | 0x7F
            } else {
                payload[record.entityIndex] = payload[record.entityIndex] == 0 ? 1 : 0
            }
        }
        for arguments in try Self.commands(path, scratch: scratch) {
            let command = arguments.filter { !$0.hasPrefix("/") }.joined(separator: " ")
            let result = try MeasuredProcess.run(Egctl.executable.path, arguments)
            #expect(result.exitStatus.map { $0 != 0 } == true, "egctl \(command): \(result)")
            let output = result.stderr + result.stdout
            #expect(output.contains("byte offset \(offset)"), "egctl \(command): \(output)")
            #expect(output.contains("the directory lists keys"), "egctl \(command): \(output)")
            #expect(output.contains(chunk), "egctl \(command): \(output)")
        }
    }
}
