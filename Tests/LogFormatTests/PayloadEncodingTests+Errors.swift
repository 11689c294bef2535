import Testing

@testable import LogFormat

/// A hand-made corrupt payload, with where and how decoding must fail.
struct CorruptPayload: CustomTestStringConvertible, Sendable {
    var testDescription: String
    var kind: PayloadKind
    var bytes: [UInt8]
    var byteOffset: Int
    var messageFragment: String

    /// A changeset whose header is valid and whose operations are written by `body`. `body` returns the byte
    /// offset of the field that is bad.
    static func changeset(
        _ name: String, _ messageFragment: String, foreignStoreCount: Int = 0, operationCount: UInt64 = 1,
        _ body: (inout ByteWriter) throws -> Int
    ) rethrows -> CorruptPayload {
        var writer = ByteWriter()
        writer.writeUInt8(1)
        writer.writeVarUInt(9)  // transaction ID
        writer.writeVarInt(0)  // commit time
        writer.writeVarUInt(0)  // empty author
        writer.writeVarUInt(10)  // next key
        writer.writeVarUInt(UInt64(foreignStoreCount))
        for _ in 0..<foreignStoreCount { writer.writeUUID(.zero) }
        writer.writeVarUInt(operationCount)
        let offset = try body(&writer)
        return CorruptPayload(
            testDescription: name, kind: .changeset, bytes: writer.bytes, byteOffset: offset,
            messageFragment: messageFragment)
    }

    /// A schema with one entity named "E" and one property written by `body`, which returns the bad offset.
    static func schema(
        _ name: String, _ messageFragment: String, _ body: (inout ByteWriter) throws -> Int
    ) rethrows -> CorruptPayload {
        var writer = ByteWriter()
        writer.writeUInt8(1)
        writer.writeVarUInt(0)  // model name
        writer.writeVarUInt(0)  // version identifier
        writer.writeUInt64LE(0)  // model hash
        writer.writeVarUInt(1)  // one entity
        writer.writeBytes([1, 0x45])  // "E"
        writer.writeUInt8(0)  // flags
        writer.writeVarUInt(1)  // one property
        let offset = try body(&writer)
        writer.writeVarUInt(0)  // no uniqueness constraints
        writer.writeVarUInt(0)  // no indexes
        return CorruptPayload(
            testDescription: name, kind: .schema, bytes: writer.bytes, byteOffset: offset,
            messageFragment: messageFragment)
    }

    /// Writes an insert of (store 0, entity 0, key 1) with one property change whose value bytes are `value`.
    static func insertValue(_ value: [UInt8], into writer: inout ByteWriter) -> Int {
        writer.writeBytes([0x01, 0x00, 0x00, 0x01, 0x01, 0x00])
        let offset = writer.byteCount
        writer.writeBytes(value)
        return offset
    }

    static let all: [CorruptPayload] = {
        var cases: [CorruptPayload] = [
            changeset("an operation count over the limit", "limit", operationCount: 1 << 40) { _ in 6 },
            changeset("an operation count larger than the bytes left", "remain", operationCount: 1 << 20) {
                $0.writeBytes([0x04, 0, 0, 1])
                return 6
            },
            changeset("an unknown operation tag", "unknown operation tag 0x5") {
                let offset = $0.byteCount
                $0.writeBytes([0x05, 0, 0, 1])
                return offset
            },
            changeset("a zero operation tag", "unknown operation tag 0x0") {
                let offset = $0.byteCount
                $0.writeBytes([0, 0, 0, 0])
                return offset
            },
            changeset("a reserved attribute value tag", "unknown attribute value tag 0x10") {
                insertValue([0x10], into: &$0)
            },
            changeset("an unknown property value tag", "unknown property value tag 0x23") {
                insertValue([0x23], into: &$0)
            },
            changeset("a store index with no foreign stores", "store index 1") {
                let offset = $0.byteCount + 1
                $0.writeBytes([0x04, 1, 0, 1])
                return offset
            },
            changeset("a store index past the foreign stores", "store index 3", foreignStoreCount: 2) {
                insertValue([0x21, 3, 0, 0], into: &$0) + 1
            },
            changeset("an entity index over the limit", "entity index") {
                $0.writeBytes([0x04, 0])
                let offset = $0.byteCount
                $0.writeVarUInt(UInt64(LogLimits.maxEntityCount))
                $0.writeVarUInt(1)
                return offset
            },
            changeset("a property index over the limit", "property index") {
                $0.writeBytes([0x02, 0, 0, 1, 1])
                let offset = $0.byteCount
                $0.writeVarUInt(UInt64(LogLimits.maxPropertyCount))
                $0.writeUInt8(0)
                return offset
            },
            changeset("an Int16 out of range", "Int16") {
                var value = ByteWriter()
                value.writeUInt8(0x01)
                value.writeVarInt(Int64(Int16.max) + 1)
                return insertValue(value.bytes, into: &$0)
            },
            changeset("an Int32 out of range", "Int32") {
                var value = ByteWriter()
                value.writeUInt8(0x02)
                value.writeVarInt(Int64(Int32.min) - 1)
                return insertValue(value.bytes, into: &$0)
            },
            changeset("a blob index over 32 bits", "index") {
                var value = ByteWriter()
                value.writeBytes([0x0F, 0x01])
                value.writeVarUInt(1 << 32)
                value.writeVarUInt(0)
                return insertValue(value.bytes, into: &$0) + 2
            },
            changeset("a string value that is not UTF-8", "UTF-8") {
                insertValue([0x08, 0x02, 0xC3, 0x28], into: &$0) + 1
            },
            changeset("a string length over the limit", "limit") {
                var value = ByteWriter()
                value.writeUInt8(0x08)
                value.writeVarUInt(UInt64(LogLimits.maxStringByteCount) + 1)
                return insertValue(value.bytes, into: &$0) + 1
            },
            changeset("a binary length past the end", "remain") {
                insertValue([0x0D, 0xFF, 0x7F, 0x00], into: &$0) + 1
            },
            changeset("a to-many count past the end", "remain") {
                var value = ByteWriter()
                value.writeUInt8(0x22)
                value.writeVarUInt(UInt64(LogLimits.maxElementCount))
                return insertValue(value.bytes, into: &$0) + 1
            },
            changeset("a property count over the limit", "limit") {
                $0.writeBytes([0x01, 0, 0, 1])
                let offset = $0.byteCount
                $0.writeVarUInt(UInt64(LogLimits.maxPropertyCount) + 1)
                return offset
            },
            schema("an unknown property kind", "unknown property kind 0x3") {
                let offset = $0.byteCount
                $0.writeBytes([0x03, 0x00, 0x07, 0x00])
                return offset
            },
            schema("an unknown attribute type", "unknown attribute type 0xe") {
                $0.writeBytes([0x01, 0x00])
                let offset = $0.byteCount
                $0.writeBytes([0x0E, 0x00])
                return offset
            },
            schema("attribute type zero", "unknown attribute type 0x0") {
                $0.writeBytes([0x01, 0x00])
                let offset = $0.byteCount
                $0.writeBytes([0x00, 0x00])
                return offset
            },
            schema("unknown attribute flags", "flag bits 0x20") {
                $0.writeBytes([0x01, 0x00, 0x07])
                let offset = $0.byteCount
                $0.writeUInt8(0x21)
                return offset
            },
            schema("an unknown delete rule", "delete rule 4") {
                $0.writeBytes([0x02, 0x00, 0x01, 0x45, 0x00])
                let offset = $0.byteCount
                $0.writeBytes([0x04, 0x00, 0x00])
                return offset
            },
            schema("unknown relationship flags", "flag bits 0x10") {
                $0.writeBytes([0x02, 0x00, 0x01, 0x45])
                let offset = $0.byteCount
                $0.writeBytes([0x10, 0x00, 0x00, 0x00])
                return offset
            },
            schema("a relationship count over 32 bits", "32-bit") {
                $0.writeBytes([0x02, 0x00, 0x01, 0x45, 0x00, 0x00])
                let offset = $0.byteCount
                $0.writeVarUInt(1 << 32)
                $0.writeVarUInt(0)
                return offset
            },
        ]
        // A relationship to an entity the schema does not have decodes field by field but does not resolve.
        var unresolved = schema("a relationship destination that is not in the schema", "not in the schema") {
            $0.writeBytes([0x02, 0x00, 0x01, 0x58, 0x00, 0x00, 0x00, 0x00])
            return 0
        }
        unresolved.byteOffset = unresolved.bytes.count
        cases.append(unresolved)
        var entityFlags = ByteWriter()
        entityFlags.writeBytes([0x01, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x00, 0x04, 0x00, 0x00, 0x00])
        cases.append(
            CorruptPayload(
                testDescription: "unknown entity flags", kind: .schema, bytes: entityFlags.bytes, byteOffset: 13,
                messageFragment: "flag bits 0x4"))
        cases.append(
            CorruptPayload(
                testDescription: "an author that is not UTF-8", kind: .changeset,
                bytes: [0x01, 0x01, 0x00, 0x01, 0xFF, 0x00, 0x00, 0x00], byteOffset: 3, messageFragment: "UTF-8"))
        cases.append(
            CorruptPayload(
                testDescription: "an entity count over the limit", kind: .schema,
                bytes: [0x01, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0x81, 0x80, 0x04], byteOffset: 11,
                messageFragment: "limit"))
        cases.append(
            CorruptPayload(
                testDescription: "a digest length past the end", kind: .checkpointEnd, bytes: [0x01, 0x00, 0x05, 1, 2],
                byteOffset: 2, messageFragment: "remain"))
        cases.append(
            CorruptPayload(
                testDescription: "a record count over the limit", kind: .checkpointChunk,
                bytes: [0x01, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F], byteOffset: 2, messageFragment: "limit"))
        return cases
    }()
}

extension PayloadEncodingTests {
    @Suite("Decoding errors")
    struct DecodingErrors {
        @Test("a payload truncated at any byte fails to decode", arguments: PayloadKind.allCases)
        func truncation(kind: PayloadKind) throws {
            let bytes = try kind.sampleBytes()
            #expect(bytes.count > 4)
            for length in 0..<bytes.count {
                let error = #expect(throws: LogFormatError.self, "\(kind) cut to \(length) bytes") {
                    _ = try kind.reencode(Array(bytes[..<length]))
                }
                #expect(error?.code == .malformedPayload)
                #expect((error?.byteOffset).map { $0 <= UInt64(length) } == true)
            }
        }

        @Test("bytes after a complete payload are an error", arguments: PayloadKind.allCases)
        func trailingBytes(kind: PayloadKind) throws {
            let bytes = try kind.sampleBytes()
            let error = #expect(throws: LogFormatError.self) { try kind.reencode(bytes + [0]) }
            #expect(error?.code == .malformedPayload)
            #expect(error?.byteOffset == UInt64(bytes.count))
            #expect(error?.message.contains("1 unexpected byte") == true)
        }

        // 4: the newest version of any payload is 3 (a changeset with named counters); 2 is the schema's (original
        // names), the checkpoint begin's (named counters) and the changeset's part of a save across stores.
        @Test(
            "a newer payload version is refused, naming the version",
            arguments: PayloadKind.allCases, [UInt8(4), 0x80, 0xFF])
        func newerVersion(kind: PayloadKind, version: UInt8) throws {
            var bytes = try kind.sampleBytes()
            bytes[0] = version
            let error = #expect(throws: LogFormatError.self) { try kind.reencode(bytes) }
            #expect(error?.code == .unsupportedVersion)
            #expect(error?.message.contains("version \(version)") == true)
        }

        @Test("version 0 and empty payloads are malformed", arguments: PayloadKind.allCases)
        func versionZeroAndEmpty(kind: PayloadKind) throws {
            var bytes = try kind.sampleBytes()
            bytes[0] = 0
            #expect(throws: LogFormatError.self) { try kind.reencode(bytes) }
            let error = #expect(throws: LogFormatError.self) { try kind.reencode([]) }
            #expect(error?.message.contains("empty") == true)
        }

        @Test("a corrupt field is reported with its offset", arguments: CorruptPayload.all)
        func corruptField(payload: CorruptPayload) {
            let error = #expect(throws: LogFormatError.self) { try payload.kind.reencode(payload.bytes) }
            #expect(error?.code == .malformedPayload)
            #expect(error?.byteOffset == UInt64(payload.byteOffset), "\(error?.message ?? "")")
            #expect(error?.message.contains(payload.messageFragment) == true, "\(error?.message ?? "")")
        }

        @Test("a payload larger than its frame limit is refused before decoding")
        func oversizedPayload() {
            var bytes = [UInt8](repeating: 0, count: LogLimits.maxFrameRawByteCount + 1)
            bytes[0] = 1
            let error = #expect(throws: LogFormatError.self) { try CheckpointEnd(decoding: bytes) }
            #expect(error?.message.contains("limit") == true)
        }
    }
}
