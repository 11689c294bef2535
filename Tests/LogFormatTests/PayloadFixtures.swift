@testable import LogFormat

/// Sample payloads shared by the payload encoding tests: small but touching every kind of field.
enum PayloadFixtures {
    static let storeA = LogUUID(string: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    static let storeB = LogUUID(string: "00000000-0000-4000-8000-0000000000FF")!

    /// One value of every attribute kind, including the extremes of each.
    static let attributeValues: [AttributeValue] = [
        .null,
        .int16(0), .int16(-1), .int16(.min), .int16(.max),
        .int32(.min), .int32(.max), .int32(300),
        .int64(0), .int64(.min), .int64(.max), .int64(-64), .int64(64),
        .double(0), .double(-0.0), .double(.pi), .double(.infinity), .double(-.infinity),
        .double(.greatestFiniteMagnitude), .double(.leastNonzeroMagnitude),
        .double(Double(bitPattern: 0x7FF8_0000_DEAD_BEEF)),  // a quiet NaN with a payload
        .double(Double(bitPattern: 0x7FF0_0000_0000_0001)),  // a signalling NaN
        .float(0), .float(-0.0), .float(.infinity), .float(Float(bitPattern: 0x7FC0_1234)),
        .float(.leastNonzeroMagnitude),
        .bool(false), .bool(true),
        .string(""), .string("plain ASCII"), .string("é ü ñ — 日本語 — 𝄞 🇫🇷 👩‍👩‍👧"), .string("nul \u{0} inside"),
        .date(0), .date(-978_307_200), .date(7.25e8), .date(-0.0), .date(Double(bitPattern: 0xFFF8_0000_0000_0000)),
        .uuid(storeA), .uuid(.zero),
        .url(""), .url("https://example.com/a%20b?q=é"),
        .decimal("0"), .decimal("-123456789012345678901234567890.000000001"),
        .binary([]), .binary([0, 1, 2, 0xFF]), .binary([UInt8](repeating: 0xAB, count: 100_000)),
        .transformable([]), .transformable(Array("{\"k\":1}".utf8)),
        .blob(BlobReference(transactionID: 1, index: 0, byteCount: 0)),
        .blob(BlobReference(transactionID: .max, index: .max, byteCount: .max)),
    ]

    static func reference(_ entity: UInt32, _ key: UInt64, store: UInt32 = 0) -> ObjectReference {
        ObjectReference(storeIndex: store, entityIndex: entity, key: key)
    }

    /// One operation of every kind, with references into two foreign stores.
    static let operations: [ChangeOperation] = [
        .insert(reference(0, 1), []),
        .insert(
            reference(1, 2),
            [
                PropertyChange(propertyIndex: 0, value: .attribute(.string("Ada"))),
                PropertyChange(propertyIndex: 1, value: .attribute(.int64(-5))),
                PropertyChange(propertyIndex: 2, value: .toOne(reference(0, 1))),
                PropertyChange(propertyIndex: 3, value: .toOne(nil)),
                PropertyChange(propertyIndex: 4, value: .toMany([])),
                PropertyChange(
                    propertyIndex: 65_535,
                    value: .toMany([reference(2, 3), reference(2, .max, store: 2), reference(65_535, 0, store: 1)])),
            ]),
        .update(reference(1, 2), [PropertyChange(propertyIndex: 1, value: .attribute(.null))]),
        .update(reference(1, 2), []),
        .relate(reference(1, 2), propertyIndex: 4, added: [reference(2, 3), reference(2, 4, store: 1)], removed: []),
        .relate(reference(1, 2), propertyIndex: 4, added: [], removed: [reference(2, 3)]),
        .relate(reference(1, 2), propertyIndex: 0, added: [], removed: []),
        .delete(reference(0, 1)),
        .delete(reference(65_535, .max, store: 2)),
    ]

    static let changeset = Changeset(
        transactionID: 42, commitTimeMicroseconds: 1_700_000_000_123_456, author: "Main context ✓", nextKey: 1_000,
        foreignStores: [storeA, storeB],
        operations: operations + [
            .insert(
                reference(3, 7),
                attributeValues.prefix(20).enumerated().map { index, value in
                    PropertyChange(propertyIndex: UInt32(index), value: .attribute(value))
                })
        ])

    /// A blog-like model with inheritance, relationships of every shape, constraints, indexes and defaults.
    static let schema = SchemaPayload(
        modelName: "Blog", versionIdentifier: "2", modelHash: 0xDEAD_BEEF_0123_4567,
        entities: [
            EntitySchema(
                name: "Person", isAbstract: true,
                properties: [
                    .attribute(
                        AttributeSchema(name: "name", type: .string, isOptional: false, defaultValue: .string(""))),
                    .attribute(AttributeSchema(name: "scratch", type: .int32, isTransient: true)),
                ],
                uniquenessConstraints: [["name"]]),
            EntitySchema(
                name: "Author", superentityName: "Person",
                properties: [
                    .attribute(
                        AttributeSchema(name: "name", type: .string, isOptional: false, defaultValue: .string(""))),
                    .attribute(AttributeSchema(name: "scratch", type: .int32, isTransient: true)),
                    .attribute(AttributeSchema(name: "identity", type: .uuid, isOptional: false)),
                    .attribute(
                        AttributeSchema(
                            name: "photo", type: .binary, externalStorageThreshold: 65_536)),
                    .attribute(
                        AttributeSchema(
                            name: "color", type: .transformable, defaultValue: .transformable([1, 2]),
                            externalStorageThreshold: 0, transformerName: "ColorTransformer")),
                    .relationship(
                        RelationshipSchema(
                            name: "posts", destinationEntityName: "Post", inverseName: "author", isToMany: true,
                            isOrdered: true, deleteRule: .cascade, minCount: 0, maxCount: 100)),
                ],
                uniquenessConstraints: [["identity"], ["name", "photo"]], indexes: [["name"], []]),
            EntitySchema(
                name: "Post",
                properties: [
                    .attribute(AttributeSchema(name: "title", type: .string, defaultValue: .string("Untitled"))),
                    .attribute(AttributeSchema(name: "rating", type: .double, defaultValue: .double(-0.0))),
                    .attribute(AttributeSchema(name: "published", type: .date)),
                    .attribute(
                        AttributeSchema(name: "views", type: .int64, isOptional: false, defaultValue: .int64(0))),
                    .relationship(
                        RelationshipSchema(
                            name: "author", destinationEntityName: "Author", inverseName: "posts", isToMany: false,
                            isOptional: false, deleteRule: .nullify)),
                    .relationship(
                        RelationshipSchema(
                            name: "tags", destinationEntityName: "Tag", inverseName: nil, isToMany: true,
                            deleteRule: .deny, minCount: 1, maxCount: .max)),
                ]),
            EntitySchema(
                name: "Tag",
                properties: [
                    .attribute(AttributeSchema(name: "label", type: .string, isOptional: false)),
                    .relationship(
                        RelationshipSchema(
                            name: "self", destinationEntityName: "Tag", inverseName: "self", isToMany: false,
                            deleteRule: .noAction)),
                ]),
        ])

    static let checkpointBegin = CheckpointBegin(
        lastTransactionID: 12_345, lastCommitTimeMicroseconds: -1, nextKey: 99, objectCount: 3)

    static let checkpointChunk = CheckpointChunk(
        foreignStores: [storeB],
        records: [
            ObjectRecord(object: reference(0, 1), properties: []),
            ObjectRecord(
                object: reference(1, 2),
                properties: [
                    PropertyChange(propertyIndex: 0, value: .attribute(.string("Grace"))),
                    PropertyChange(propertyIndex: 1, value: .toOne(reference(0, 1, store: 1))),
                    PropertyChange(propertyIndex: 2, value: .toMany([reference(0, 1), reference(9, 9, store: 1)])),
                ]),
            ObjectRecord(
                object: reference(2, .max), properties: [PropertyChange(propertyIndex: 7, value: .toOne(nil))]),
        ])

    static let checkpointEnd = CheckpointEnd(objectCount: 3, stateDigest: (0..<32).map { UInt8($0) })
}

/// Each kind of payload, with its sample value and its encoder and decoder, so that tests can run over all kinds.
enum PayloadKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case changeset, schema, checkpointBegin, checkpointChunk, checkpointEnd

    var description: String { rawValue }

    /// The encoded sample payload of this kind.
    func sampleBytes() throws -> [UInt8] {
        switch self {
        case .changeset: try PayloadFixtures.changeset.encoded()
        case .schema: try PayloadFixtures.schema.encoded()
        case .checkpointBegin: try PayloadFixtures.checkpointBegin.encoded()
        case .checkpointChunk: try PayloadFixtures.checkpointChunk.encoded()
        case .checkpointEnd: try PayloadFixtures.checkpointEnd.encoded()
        }
    }

    /// Decodes `bytes` as this kind and encodes the result again.
    func reencode(_ bytes: [UInt8]) throws(LogFormatError) -> [UInt8] {
        switch self {
        case .changeset: try Changeset(decoding: bytes).encoded()
        case .schema: try SchemaPayload(decoding: bytes).encoded()
        case .checkpointBegin: try CheckpointBegin(decoding: bytes).encoded()
        case .checkpointChunk: try CheckpointChunk(decoding: bytes).encoded()
        case .checkpointEnd: try CheckpointEnd(decoding: bytes).encoded()
        }
    }
}
