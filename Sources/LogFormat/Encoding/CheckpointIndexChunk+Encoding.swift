// CheckpointIndexChunk (format 1.4), after the version byte (1):
//   arity varuint (1 ... LogLimits.maxIndexArity) · entry count varuint (1 ... LogLimits.maxIndexChunkEntryCount),
//   then per entry: key varuint · `arity` attribute values (tag byte, then the value, as in a changeset)
// One frame's payload, so at most `LogLimits.maxFrameRawByteCount` bytes; every count is checked against the bytes
// that remain before anything is allocated (`Docs/FileFormat-Checkpoints.md` §7.2).

extension CheckpointIndexChunk {
    /// Encodes the payload.
    ///
    /// - Throws: ``LogFormatError/Code/invalidArgument`` for an arity or entry count out of range, or an entry
    ///   whose value count is not the arity; ``LogFormatError/Code/limitExceeded`` when it does not fit one frame.
    package func encoded() throws(LogFormatError) -> [UInt8] {
        guard arity >= 1, arity <= LogLimits.maxIndexArity else {
            throw LogFormatError(
                .invalidArgument, "an index chunk of arity \(arity), not 1 to \(LogLimits.maxIndexArity)")
        }
        guard !keys.isEmpty, keys.count <= LogLimits.maxIndexChunkEntryCount else {
            throw LogFormatError(
                .invalidArgument,
                "an index chunk of \(keys.count) entries, not 1 to \(LogLimits.maxIndexChunkEntryCount)")
        }
        if let misshapenEntry { throw LogFormatError(.invalidArgument, misshapenEntry) }
        guard values.count == keys.count * arity else {
            throw LogFormatError(
                .invalidArgument,
                "an index chunk of \(keys.count) entries has \(values.count) values, not \(arity) each")
        }
        return try PayloadEnvelope.encode(
            "checkpoint index chunk", maxByteCount: LogLimits.maxFrameRawByteCount,
            reservedByteCount: 16 * values.count
        ) { (writer) throws(LogFormatError) in
            writer.writeVarUInt(UInt64(arity))
            writer.writeVarUInt(UInt64(keys.count))
            var position = 0
            for key in keys {
                writer.writeVarUInt(key)
                for index in position..<position + arity { try values[index].encode(to: &writer) }
                position += arity
            }
        }
    }

    /// Decodes a payload encoded by ``encoded()``, checking every count before it allocates.
    ///
    /// - Throws: ``LogFormatError/Code/malformedPayload`` with the byte offset of the problem;
    ///   ``LogFormatError/Code/unsupportedVersion`` for a payload written by a newer format version.
    package init(decoding bytes: [UInt8]) throws(LogFormatError) {
        self = try PayloadEnvelope.decode(
            "checkpoint index chunk", from: bytes, maxByteCount: LogLimits.maxFrameRawByteCount
        ) { (reader) throws(LogFormatError) -> CheckpointIndexChunk in
            let arityStart = reader.offset
            let arity = try reader.readVarUInt("an index chunk's arity")
            guard arity >= 1, arity <= UInt64(LogLimits.maxIndexArity) else {
                throw reader.malformed(
                    "an index chunk's arity is \(arity), not 1 to \(LogLimits.maxIndexArity)", at: arityStart)
            }
            // An entry is at least a one-byte key and one tag byte per value.
            let countStart = reader.offset
            let count = try reader.readCount(
                "the number of index entries", limit: LogLimits.maxIndexChunkEntryCount,
                minimumElementByteCount: 1 + Int(arity))
            guard count >= 1 else { throw reader.malformed("an index chunk holds no entry", at: countStart) }
            var keys: [UInt64] = []
            keys.reserveCapacity(count)
            var values: [AttributeValue] = []
            values.reserveCapacity(count * Int(arity))
            for _ in 0..<count {
                keys.append(try reader.readVarUInt("an index entry's key"))
                for _ in 0..<arity { values.append(try AttributeValue(from: &reader)) }
            }
            return CheckpointIndexChunk(arity: Int(arity), keys: keys, values: values)
        }
    }
}
