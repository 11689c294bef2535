import LogFormat
import Testing

@Suite("Schema payloads record original names (version 2) and still read version 1")
struct SchemaOriginalNameTests {
    static let renamed = SchemaPayload(
        modelName: "Library", versionIdentifier: "2", modelHash: 7,
        entities: [
            EntitySchema(
                name: "Bookcase",
                properties: [
                    .attribute(AttributeSchema(name: "tag", type: .string, originalName: "label")),
                    .relationship(
                        RelationshipSchema(
                            name: "volumes", destinationEntityName: "Bookcase", inverseName: nil, isToMany: true,
                            originalName: "books")),
                ],
                originalName: "Shelf")
        ])

    static var plain: SchemaPayload {
        var schema = renamed
        schema.entities[0].originalName = nil
        schema.entities[0].properties = [
            .attribute(AttributeSchema(name: "tag", type: .string)),
            .relationship(
                RelationshipSchema(name: "volumes", destinationEntityName: "Bookcase", inverseName: nil, isToMany: true)
            ),
        ]
        return schema
    }

    @Test func originalNamesSurviveARoundTripInVersion2() throws {
        let bytes = try Self.renamed.encoded()
        #expect(bytes.first == 2)
        let decoded = try SchemaPayload(decoding: bytes)
        #expect(decoded == Self.renamed)
        #expect(decoded.entities[0].originalName == "Shelf")
    }

    @Test func aSchemaWithoutOriginalNamesIsStillWrittenAsVersion1() throws {
        let bytes = try Self.plain.encoded()
        #expect(bytes.first == 1)
        #expect(try SchemaPayload(decoding: bytes) == Self.plain)
    }

    @Test func originalNameFlagsAreUnknownInAVersion1Payload() throws {
        var bytes = try Self.renamed.encoded()
        bytes[0] = 1
        let error = try #require(throws: LogFormatError.self) { try SchemaPayload(decoding: bytes) }
        #expect(error.code == .malformedPayload)
        #expect(error.message.contains("entity 'Bookcase' has unknown flag bits 0x4"))
    }

    @Test func aNewerSchemaVersionIsRefusedAsUnsupported() throws {
        var bytes = try Self.renamed.encoded()
        bytes[0] = 3
        let error = try #require(throws: LogFormatError.self) { try SchemaPayload(decoding: bytes) }
        #expect(error.code == .unsupportedVersion)
        #expect(error.message.contains("versions up to 2"))
    }
}
