import Testing

@testable import LogFormat

/// Whether two attribute values have the same encoding (so NaN payloads and the sign of zero count).
func haveSameBits(_ lhs: AttributeValue, _ rhs: AttributeValue) throws -> Bool {
    var left = ByteWriter()
    var right = ByteWriter()
    try lhs.encode(to: &left)
    try rhs.encode(to: &right)
    return left.bytes == right.bytes
}

/// An attribute value with a short description for test reports (a 100 kB binary value prints its size only).
struct AttributeValueSample: CustomTestStringConvertible, Sendable {
    var value: AttributeValue

    var testDescription: String {
        switch value {
        case .binary(let bytes): "binary(\(bytes.count) bytes)"
        case .transformable(let bytes): "transformable(\(bytes.count) bytes)"
        case .double(let number): "double(\(number), bits 0x\(String(number.bitPattern, radix: 16)))"
        case .date(let number): "date(\(number), bits 0x\(String(number.bitPattern, radix: 16)))"
        case .float(let number): "float(\(number), bits 0x\(String(number.bitPattern, radix: 16)))"
        default: String(describing: value)
        }
    }
}

@Suite("Payload encoding")
struct PayloadEncodingTests {
    @Suite("Round trips")
    struct RoundTrips {
        @Test(
            "every attribute value survives a changeset round trip",
            arguments: PayloadFixtures.attributeValues.map(AttributeValueSample.init))
        func attributeValue(sample: AttributeValueSample) throws {
            let value = sample.value
            let changeset = Changeset(
                transactionID: 1, commitTimeMicroseconds: 0, author: "", nextKey: 2,
                operations: [
                    .insert(.init(entityIndex: 0, key: 1), [.init(propertyIndex: 3, value: .attribute(value))])
                ])
            let decoded = try Changeset(decoding: try changeset.encoded())
            guard case .insert(_, let changes) = try #require(decoded.operations.first),
                case .attribute(let decodedValue) = try #require(changes.first?.value)
            else {
                Issue.record("decoded \(decoded.operations) instead of one insert with one attribute")
                return
            }
            #expect(try haveSameBits(decodedValue, value))
            if case .double(let number) = value, number.isNaN {
                guard case .double(let decodedNumber) = decodedValue else { Issue.record("not a double"); return }
                #expect(decodedNumber.bitPattern == number.bitPattern)
            } else if case .float(let number) = value, number.isNaN {
                guard case .float(let decodedNumber) = decodedValue else { Issue.record("not a float"); return }
                #expect(decodedNumber.bitPattern == number.bitPattern)
            } else if case .date(let number) = value, number.isNaN {
                guard case .date(let decodedNumber) = decodedValue else { Issue.record("not a date"); return }
                #expect(decodedNumber.bitPattern == number.bitPattern)
            } else {
                #expect(decodedValue == value)
            }
        }

        @Test("the sign of zero is kept")
        func negativeZero() throws {
            var writer = ByteWriter()
            try AttributeValue.double(-0.0).encode(to: &writer)
            let decoded = try ByteReader.withReader(over: writer.bytes) { (reader) throws(LogFormatError) in
                try AttributeValue(from: &reader)
            }
            guard case .double(let number) = decoded else { Issue.record("decoded \(decoded)"); return }
            #expect(number == 0 && number.sign == .minus)
        }

        @Test("every operation survives a round trip", arguments: PayloadFixtures.operations)
        func operation(operation: ChangeOperation) throws {
            let changeset = Changeset(
                transactionID: .max, commitTimeMicroseconds: .min, author: "a", nextKey: .max,
                foreignStores: [PayloadFixtures.storeA, PayloadFixtures.storeB], operations: [operation])
            #expect(try Changeset(decoding: try changeset.encoded()) == changeset)
        }

        @Test("a changeset with every kind of operation and value survives a round trip")
        func changeset() throws {
            let bytes = try PayloadFixtures.changeset.encoded()
            #expect(try Changeset(decoding: bytes) == PayloadFixtures.changeset)
        }

        @Test("an empty changeset survives a round trip")
        func emptyChangeset() throws {
            let changeset = Changeset(
                transactionID: 0, commitTimeMicroseconds: 0, author: "", nextKey: 0, operations: [])
            #expect(try Changeset(decoding: try changeset.encoded()) == changeset)
        }

        @Test("a schema with inheritance, relationships, constraints and defaults survives a round trip")
        func schema() throws {
            let decoded = try SchemaPayload(decoding: try PayloadFixtures.schema.encoded())
            #expect(decoded == PayloadFixtures.schema)
            let author = try #require(decoded.entities.first { $0.name == "Author" })
            #expect(author.superentityName == "Person")
            #expect(author.uniquenessConstraints == [["identity"], ["name", "photo"]])
        }

        @Test("every attribute type and delete rule survives a schema round trip")
        func schemaEnumerations() throws {
            let attributes = AttributeType.allCases.map { type in
                PropertySchema.attribute(AttributeSchema(name: "\(type)", type: type))
            }
            let relationships = DeleteRule.allCases.map { rule in
                PropertySchema.relationship(
                    RelationshipSchema(
                        name: "\(rule)", destinationEntityName: "E", inverseName: nil, isToMany: true,
                        deleteRule: rule))
            }
            let schema = SchemaPayload(
                modelName: "", versionIdentifier: "", modelHash: 0,
                entities: [EntitySchema(name: "E", properties: attributes + relationships)])
            #expect(try SchemaPayload(decoding: try schema.encoded()) == schema)
        }

        @Test("an empty schema survives a round trip")
        func emptySchema() throws {
            let schema = SchemaPayload(modelName: "M", versionIdentifier: "1", modelHash: .max, entities: [])
            #expect(try SchemaPayload(decoding: try schema.encoded()) == schema)
        }

        @Test("checkpoint payloads survive a round trip")
        func checkpoints() throws {
            #expect(
                try CheckpointBegin(decoding: try PayloadFixtures.checkpointBegin.encoded())
                    == PayloadFixtures.checkpointBegin)
            #expect(
                try CheckpointChunk(decoding: try PayloadFixtures.checkpointChunk.encoded())
                    == PayloadFixtures.checkpointChunk)
            #expect(
                try CheckpointEnd(decoding: try PayloadFixtures.checkpointEnd.encoded())
                    == PayloadFixtures.checkpointEnd)
            let extremes = CheckpointBegin(
                lastTransactionID: .max, lastCommitTimeMicroseconds: .min, nextKey: .max, objectCount: .max)
            #expect(try CheckpointBegin(decoding: try extremes.encoded()) == extremes)
            let empty = CheckpointChunk(records: [])
            #expect(try CheckpointChunk(decoding: try empty.encoded()) == empty)
            let noDigest = CheckpointEnd(objectCount: 0, stateDigest: [])
            #expect(try CheckpointEnd(decoding: try noDigest.encoded()) == noDigest)
        }

        @Test("every payload starts with format version 1", arguments: PayloadKind.allCases)
        func versionByte(kind: PayloadKind) throws {
            #expect(try kind.sampleBytes().first == 1)
        }
    }

    /// Exact bytes, as the spec (`Docs/FileFormat-Payloads.md`) gives them: these freeze the format.
    @Suite("Exact bytes")
    struct ExactBytes {
        @Test("a small changeset has the bytes the spec shows")
        func changeset() throws {
            let changeset = Changeset(
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
                ])
            let expected: [UInt8] = [
                0x01,  // payload format version
                0x07,  // transactionID 7
                0x01,  // commit time -1 (zigzag 1)
                0x02, 0x6D, 0x65,  // author "me"
                0xAC, 0x02,  // nextKey 300
                0x00,  // no foreign stores
                0x02,  // two operations
                0x01, 0x00, 0x02, 0xAB, 0x02,  // insert (store 0, entity 2, key 299)
                0x03,  // three property changes
                0x00, 0x08, 0x02, 0x48, 0x69,  // property 0: string "Hi"
                0x01, 0x07,  // property 1: true
                0x04, 0x21, 0x00, 0x01, 0x05,  // property 4: to-one (store 0, entity 1, key 5)
                0x04, 0x00, 0x01, 0x06,  // delete (store 0, entity 1, key 6)
            ]
            #expect(try changeset.encoded() == expected)
            #expect(try Changeset(decoding: expected) == changeset)
        }

        @Test("each attribute value has the tag and layout the spec shows")
        func attributeValues() throws {
            let cases: [(AttributeValue, [UInt8])] = [
                (.null, [0x00]),
                (.int16(-2), [0x01, 0x03]),
                (.int32(64), [0x02, 0x80, 0x01]),
                (.int64(.min), [0x03, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]),
                (.double(1), [0x04, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F]),
                (.float(1), [0x05, 0, 0, 0x80, 0x3F]),
                (.bool(false), [0x06]),
                (.bool(true), [0x07]),
                (.string("é"), [0x08, 0x02, 0xC3, 0xA9]),
                (.date(-0.0), [0x09, 0, 0, 0, 0, 0, 0, 0, 0x80]),
                (
                    .uuid(LogUUID(high: 0x0011_2233_4455_6677, low: 0x8899_AABB_CCDD_EEFF)),
                    [
                        0x0A, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE,
                        0xFF,
                    ]
                ),
                (.url("a:"), [0x0B, 0x02, 0x61, 0x3A]),
                (.decimal("1.5"), [0x0C, 0x03, 0x31, 0x2E, 0x35]),
                (.binary([9]), [0x0D, 0x01, 0x09]),
                (.transformable([]), [0x0E, 0x00]),
                (.blob(BlobReference(transactionID: 3, index: 1, byteCount: 200)), [0x0F, 0x03, 0x01, 0xC8, 0x01]),
            ]
            for (value, expected) in cases {
                var writer = ByteWriter()
                try value.encode(to: &writer)
                #expect(writer.bytes == expected, "\(value)")
            }
            #expect(Set(cases.map { $0.1[0] }).count == AttributeValue.EncodingTag.allCases.count)
        }

        @Test("a checkpoint end has the bytes the spec shows")
        func checkpointEnd() throws {
            let end = CheckpointEnd(objectCount: 128, stateDigest: [0xAA, 0xBB])
            #expect(try end.encoded() == [0x01, 0x80, 0x01, 0x02, 0xAA, 0xBB])
        }
    }

    @Suite("Encoding errors")
    struct EncodingErrors {
        @Test("a store index beyond the foreign stores is not written")
        func storeIndex() {
            let changeset = Changeset(
                transactionID: 1, commitTimeMicroseconds: 0, author: "", nextKey: 0, foreignStores: [.zero],
                operations: [.delete(ObjectReference(storeIndex: 2, entityIndex: 0, key: 1))])
            let error = #expect(throws: LogFormatError.self) { try changeset.encoded() }
            #expect(error?.code == .invalidArgument)
        }

        @Test("indices at or over their limits are not written")
        func indexLimits() {
            let entity = Changeset(
                transactionID: 1, commitTimeMicroseconds: 0, author: "", nextKey: 0,
                operations: [.delete(ObjectReference(entityIndex: UInt32(LogLimits.maxEntityCount), key: 1))])
            #expect(throws: LogFormatError.self) { try entity.encoded() }
            let property = CheckpointChunk(
                records: [
                    ObjectRecord(
                        object: ObjectReference(entityIndex: 0, key: 1),
                        properties: [PropertyChange(propertyIndex: .max, value: .toOne(nil))])
                ])
            let error = #expect(throws: LogFormatError.self) { try property.encoded() }
            #expect(error?.code == .limitExceeded)
        }

        static let unresolvableSchemas: [(String, [EntitySchema])] = [
            ("duplicate entity", [EntitySchema(name: "A", properties: []), EntitySchema(name: "A", properties: [])]),
            ("missing superentity", [EntitySchema(name: "A", superentityName: "B", properties: [])]),
            ("own superentity", [EntitySchema(name: "A", superentityName: "A", properties: [])]),
            (
                "missing destination",
                [
                    EntitySchema(
                        name: "A",
                        properties: [
                            .relationship(
                                RelationshipSchema(
                                    name: "b", destinationEntityName: "B", inverseName: nil, isToMany: false))
                        ])
                ]
            ),
        ]

        @Test("a schema whose names do not resolve is not written", arguments: unresolvableSchemas)
        func unresolvedSchema(problem: String, entities: [EntitySchema]) {
            let schema = SchemaPayload(modelName: "M", versionIdentifier: "1", modelHash: 0, entities: entities)
            let error = #expect(throws: LogFormatError.self, "\(problem)") { try schema.encoded() }
            #expect(error?.code == .invalidArgument)
        }
    }
}
