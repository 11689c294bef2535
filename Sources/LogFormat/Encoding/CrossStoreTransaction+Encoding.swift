// The cross-store record of a version 2 changeset: id uuid · participant count varuint (2 or more), then per
// participant its store UUID (16 bytes) and its transaction ID varuint (1 or more), in strictly ascending order of
// store UUID — one encoding per record, as everywhere in the payloads.

extension CrossStoreTransaction {
    /// The fewest bytes a participant takes: a UUID and a one-byte varint.
    static let minimumParticipantByteCount = 17

    func encode(to writer: inout ByteWriter) throws(LogFormatError) {
        writer.writeUUID(id)
        try writer.writeCount(participants.count, field: "the cross-store transaction's participants")
        for participant in participants {
            writer.writeUUID(participant.storeUUID)
            writer.writeVarUInt(participant.transactionID)
        }
    }

    init(from reader: inout ByteReader) throws(LogFormatError) {
        let id = try reader.readUUID("the cross-store transaction ID")
        let countOffset = reader.offset
        let count = try reader.readCount(
            "the number of participants", minimumElementByteCount: Self.minimumParticipantByteCount)
        guard count >= 2 else {
            throw reader.malformed(
                "a cross-store transaction has \(count) participant(s); it needs at least two", at: countOffset)
        }
        var participants: [Participant] = []
        participants.reserveCapacity(count)
        for _ in 0..<count {
            let start = reader.offset
            let storeUUID = try reader.readUUID("a participant's store UUID")
            if let previous = participants.last, !(previous.storeUUID < storeUUID) {
                throw reader.malformed(
                    "participant \(storeUUID) of cross-store transaction \(id) does not follow \(previous.storeUUID) "
                        + "in ascending order", at: start)
            }
            let idOffset = reader.offset
            let transactionID = try reader.readVarUInt("a participant's transaction ID")
            guard transactionID > 0 else {
                throw reader.malformed(
                    "participant \(storeUUID) has transaction ID 0, which is never used", at: idOffset)
            }
            participants.append(Participant(storeUUID: storeUUID, transactionID: transactionID))
        }
        self.init(id: id, participants: participants)
    }
}
