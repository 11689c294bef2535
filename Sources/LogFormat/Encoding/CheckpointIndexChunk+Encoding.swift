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
        guard !entries.isEmpty, entries.count <= LogLimits.maxIndexChunkEntryCount else {
            throw LogFormatError(
                .invalidArgument,
                "an index chunk of \(entries.count) entries, not 1 to \(LogLimits.maxIndexChunkEntryCount)")
        }
        return try PayloadEnvelope.encode(
            "checkpoint index chunk", maxByteCount: LogLimits.maxFrameRawByteCount,
            reservedByteCount: 16 * entries.count * arity
        ) { (writer) throws(LogFormatError) in
            writer.writeVarUInt(UInt64(arity))
            writer.writeVarUInt(UInt64(entries.count))
            for entry in entries {
                guard entry.values.count == arity else {
                    throw LogFormatError(
                        .invalidArgument,
                        "an index entry of key \(entry.key) has \(entry.values.count) values, not \(arity)")
                }
                writer.writeVarUInt(entry.key)
                for value in entry.values { try value.encode(to: &writer) }
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
            var entries: [CheckpointIndexEntry] = []
            entries.reserveCapacity(count)
            for _ in 0..<count {
                let key = try reader.readVarUInt("an index entry's key")
                var values: [AttributeValue] = []
                values.reserveCapacity(Int(arity))
                for _ in 0..<arity { values.append(try AttributeValue(from: &reader)) }
                entries.append(CheckpointIndexEntry(values: values, key: key))
            }
            return CheckpointIndexChunk(arity: Int(arity), entries: entries)
        }
    }
}
