// A list of UUIDs (the foreign stores of a changeset or checkpoint chunk): a varint count, then 16 bytes each.

extension LogUUID {
    /// Appends a count and the UUIDs.
    static func encodeList(
        _ uuids: [LogUUID], to writer: inout ByteWriter, field: @autoclosure () -> String
    ) throws(LogFormatError) {
        try writer.writeCount(uuids.count, field: field())
        for uuid in uuids {
            writer.writeUUID(uuid)
        }
    }

    /// Reads a count and that many UUIDs.
    static func decodeList(from reader: inout ByteReader, _ field: StaticString) throws(LogFormatError) -> [LogUUID] {
        let count = try reader.readCount(field, minimumElementByteCount: 16)
        var uuids: [LogUUID] = []
        uuids.reserveCapacity(count)
        for _ in 0..<count {
            uuids.append(try reader.readUUID("a UUID"))
        }
        return uuids
    }
}
