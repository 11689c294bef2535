// The schema payload, in this order:
//   version u8 (1, or 2 when a name records its original name) · modelName string · versionIdentifier string · modelHash u64 LE ·
//   entity count varuint, then entities (see `EntitySchema+Encoding.swift`).
// The model hash is fixed-width because a hash's bits are uniformly random: a varint would take 10 bytes.

extension SchemaPayload {
    /// Encodes the schema in the compact binary payload format (`Docs/FileFormat-Payloads.md`).
    ///
    /// - Throws: ``LogFormatError/Code/limitExceeded`` when a string, list or count is over its limit in
    ///   ``LogLimits`` or the payload would exceed ``LogLimits/maxFrameRawByteCount``;
    ///   ``LogFormatError/Code/invalidArgument`` when entity names repeat, or a superentity or relationship
    ///   destination names no entity of the schema (such a schema could not be decoded).
    package func encoded() throws(LogFormatError) -> [UInt8] {
        if let problem = referenceProblem() { throw LogFormatError(.invalidArgument, problem) }
        // Version 1 while no original name is recorded, so that older readers still read such schemas.
        let version = recordsOriginalNames ? Self.originalNamesVersion : 1
        return try PayloadEnvelope.encode("schema", maxByteCount: LogLimits.maxFrameRawByteCount, version: version) {
            (writer) throws(LogFormatError) in
            try writer.writeString(modelName, field: "the model name")
            try writer.writeString(versionIdentifier, field: "the model version identifier")
            writer.writeUInt64LE(modelHash)
            try writer.writeCount(entities.count, limit: LogLimits.maxEntityCount, field: "the schema's entities")
            for entity in entities {
                try entity.encode(to: &writer)
            }
        }
    }

    /// Decodes a schema encoded by ``encoded()``.
    ///
    /// - Throws: ``LogFormatError/Code/malformedPayload`` with the byte offset of the problem when the bytes are
    ///   truncated, corrupt, over a limit, or followed by extra bytes, or when entity names repeat or a superentity
    ///   or relationship destination names no entity; ``LogFormatError/Code/unsupportedVersion`` when the payload
    ///   was written by a newer format version.
    package init(decoding bytes: [UInt8]) throws(LogFormatError) {
        self = try ByteReader.withReader(over: bytes) { (reader) throws(LogFormatError) -> SchemaPayload in
            try Self.decode(from: &reader)
        }
    }

    /// The schema payload version that added original names (entity, attribute and relationship flags).
    static let originalNamesVersion: UInt8 = 2

    /// Whether an entity or property records the name it had in the previous model version.
    private var recordsOriginalNames: Bool {
        entities.contains { entity in
            entity.originalName != nil
                || entity.properties.contains { property in
                    switch property {
                    case .attribute(let attribute): attribute.originalName != nil
                    case .relationship(let relationship): relationship.originalName != nil
                    }
                }
        }
    }

    private static func decode(from reader: inout ByteReader) throws(LogFormatError) -> SchemaPayload {
        try PayloadEnvelope.decode(
            "schema", from: &reader, maxByteCount: LogLimits.maxFrameRawByteCount, newestVersion: originalNamesVersion
        ) { (reader, version) throws(LogFormatError) -> SchemaPayload in
            let allowsOriginalNames = version >= originalNamesVersion
            let modelName = try reader.readString("the model name")
            let versionIdentifier = try reader.readString("the model version identifier")
            let modelHash = try reader.readUInt64LE("the model hash")
            let entityCount = try reader.readCount(
                "the number of entities", limit: LogLimits.maxEntityCount,
                minimumElementByteCount: EntitySchema.minimumEncodedByteCount)
            var entities: [EntitySchema] = []
            entities.reserveCapacity(entityCount)
            for _ in 0..<entityCount {
                entities.append(try EntitySchema(from: &reader, allowsOriginalNames: allowsOriginalNames))
            }
            let schema = SchemaPayload(
                modelName: modelName, versionIdentifier: versionIdentifier, modelHash: modelHash, entities: entities)
            if let problem = schema.referenceProblem() { throw reader.malformed(problem) }
            return schema
        }
    }

    /// A sentence describing the first name that does not resolve within the schema, or `nil` when all do.
    ///
    /// Checked on both encode and decode, so that a schema that was written can always be read back.
    private func referenceProblem() -> String? {
        var entityNames: Set<String> = []
        entityNames.reserveCapacity(entities.count)
        for entity in entities where !entityNames.insert(entity.name).inserted {
            return "the schema has more than one entity named '\(entity.name)'"
        }
        for entity in entities {
            if let superentityName = entity.superentityName {
                if superentityName == entity.name { return "entity '\(entity.name)' is its own superentity" }
                if !entityNames.contains(superentityName) {
                    return "entity '\(entity.name)' has superentity '\(superentityName)', which is not in the schema"
                }
            }
            for case .relationship(let relationship) in entity.properties
            where !entityNames.contains(relationship.destinationEntityName) {
                return "relationship '\(entity.name).\(relationship.name)' has destination "
                    + "'\(relationship.destinationEntityName)', which is not in the schema"
            }
        }
        return nil
    }
}
