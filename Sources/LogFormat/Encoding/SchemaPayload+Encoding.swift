// The schema payload, in this order:
//   version u8 (1) · modelName string · versionIdentifier string · modelHash u64 LE ·
//   entity count varuint, then entities (see `EntitySchema+Encoding.swift`).
// The model hash is fixed-width because a hash's bits are uniformly random: a varint would take 10 bytes.

extension SchemaPayload {
    /// Encodes the schema in the compact binary payload format (`Docs/FileFormat-Payloads.md`).
    ///
    /// - Throws: ``LogFormatError/Code/limitExceeded`` when a string, list or count is over its limit in
    ///   ``LogLimits`` or the payload would exceed ``LogLimits/maxFrameRawByteCount``;
    ///   ``LogFormatError/Code/invalidArgument`` when entity names repeat, or a superentity or relationship
    ///   destination names no entity of the schema (such a schema could not be decoded).
    public func encoded() throws(LogFormatError) -> [UInt8] {
        if let problem = referenceProblem() { throw LogFormatError(.invalidArgument, problem) }
        return try PayloadEnvelope.encode("schema", maxByteCount: LogLimits.maxFrameRawByteCount) {
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
    public init(decoding bytes: [UInt8]) throws(LogFormatError) {
        self = try PayloadEnvelope.decode("schema", from: bytes, maxByteCount: LogLimits.maxFrameRawByteCount) {
            (reader) throws(LogFormatError) -> SchemaPayload in
            let modelName = try reader.readString("the model name")
            let versionIdentifier = try reader.readString("the model version identifier")
            let modelHash = try reader.readUInt64LE("the model hash")
            let entityCount = try reader.readCount(
                "the number of entities", limit: LogLimits.maxEntityCount,
                minimumElementByteCount: EntitySchema.minimumEncodedByteCount)
            var entities: [EntitySchema] = []
            entities.reserveCapacity(entityCount)
            for _ in 0..<entityCount {
                entities.append(try EntitySchema(from: &reader))
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
