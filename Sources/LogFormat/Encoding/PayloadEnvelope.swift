/// What every payload shares: a leading format-version byte, a size limit, and nothing after its last field.
enum PayloadEnvelope {
    /// The payload format version this code writes, and the newest it reads.
    static let currentVersion: UInt8 = 1

    /// Encodes a payload: the version byte, then whatever `body` writes.
    ///
    /// - Throws: ``LogFormatError/Code/limitExceeded`` when the result is larger than `maxByteCount`, and whatever
    ///   `body` throws.
    static func encode(
        _ payloadName: StaticString, maxByteCount: Int, reservedByteCount: Int = 256, version: UInt8 = currentVersion,
        _ body: (inout ByteWriter) throws(LogFormatError) -> Void
    ) throws(LogFormatError) -> [UInt8] {
        var writer = ByteWriter(reservedByteCount: reservedByteCount)
        writer.writeUInt8(version)
        try body(&writer)
        guard writer.byteCount <= maxByteCount else {
            throw LogFormatError(
                .limitExceeded,
                "the encoded \(payloadName) is \(writer.byteCount) bytes, more than the limit of \(maxByteCount)")
        }
        return writer.bytes
    }

    /// Decodes a payload from `bytes`: checks the size and the version byte, runs `body`, and then requires that
    /// every byte was consumed.
    static func decode<Value>(
        _ payloadName: StaticString, from bytes: [UInt8], maxByteCount: Int,
        _ body: (inout ByteReader) throws(LogFormatError) -> Value
    ) throws(LogFormatError) -> Value {
        try ByteReader.withReader(over: bytes) { (reader) throws(LogFormatError) -> Value in
            try decode(payloadName, from: &reader, maxByteCount: maxByteCount, body)
        }
    }

    /// Decodes a payload that spans all of `reader`'s buffer, with the same checks as the overload taking an array.
    static func decode<Value>(
        _ payloadName: StaticString, from reader: inout ByteReader, maxByteCount: Int,
        _ body: (inout ByteReader) throws(LogFormatError) -> Value
    ) throws(LogFormatError) -> Value {
        try decode(payloadName, from: &reader, maxByteCount: maxByteCount, newestVersion: currentVersion) {
            (reader, _) throws(LogFormatError) -> Value in try body(&reader)
        }
    }

    /// Decodes a payload whose format has versions up to `newestVersion`; `body` gets the version the payload has.
    ///
    /// - Parameter readsToEnd: whether every byte must be consumed; `false` for a reader of a payload's leading
    ///   fields only (the size and the version byte are checked all the same).
    static func decode<Value>(
        _ payloadName: StaticString, from reader: inout ByteReader, maxByteCount: Int, newestVersion: UInt8,
        readsToEnd: Bool = true, _ body: (inout ByteReader, UInt8) throws(LogFormatError) -> Value
    ) throws(LogFormatError) -> Value {
        guard reader.byteCount <= maxByteCount else {
            throw reader.malformed(
                "the \(payloadName) payload is \(reader.byteCount) bytes, more than the limit of \(maxByteCount)",
                at: 0)
        }
        guard reader.byteCount > 0 else { throw reader.malformed("the \(payloadName) payload is empty", at: 0) }
        let version = try reader.readUInt8("the payload format version")
        guard version >= 1, version <= newestVersion else {
            if version > newestVersion {
                throw LogFormatError(
                    .unsupportedVersion,
                    "the \(payloadName) payload has format version \(version), but this reader knows only "
                        + "versions up to \(newestVersion)",
                    byteOffset: 0)
            }
            throw reader.malformed("the \(payloadName) payload has format version 0, which was never written", at: 0)
        }
        let value = try body(&reader, version)
        guard reader.isAtEnd || !readsToEnd else {
            throw reader.malformed(
                "\(reader.remainingByteCount) unexpected byte(s) follow the end of the \(payloadName) payload "
                    + "at byte offset \(reader.offset)")
        }
        return value
    }
}
