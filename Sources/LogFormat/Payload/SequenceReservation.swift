/// A named counter's high-water mark: every value up to ``lastValue`` may have been handed out, so the next value
/// is `lastValue + 1` (see ``Changeset/sequenceReservations``).
public struct SequenceReservation: Hashable, Sendable {
    /// The counter's name (at most `LogLimits.maxStringByteCount` bytes of UTF-8).
    public var name: String
    /// The largest value handed out, or that may have been.
    public var lastValue: UInt64

    /// Creates a reservation.
    public init(name: String, lastValue: UInt64) {
        self.name = name
        self.lastValue = lastValue
    }
}

extension SequenceReservation {
    /// Writes a list of reservations: a count, then for each its name and its last value.
    static func encodeList(_ list: [SequenceReservation], to writer: inout ByteWriter) throws(LogFormatError) {
        try writer.writeCount(list.count, field: "the sequence reservations")
        for reservation in list {
            try writer.writeString(reservation.name, field: "a sequence's name")
            writer.writeVarUInt(reservation.lastValue)
        }
    }

    /// Reads a list written by ``encodeList(_:to:)``.
    static func decodeList(from reader: inout ByteReader) throws(LogFormatError) -> [SequenceReservation] {
        // A reservation is at least an empty name (one byte) and a value (one byte).
        let count = try reader.readCount("the number of sequence reservations", minimumElementByteCount: 2)
        var list: [SequenceReservation] = []
        list.reserveCapacity(count)
        for _ in 0..<count {
            let name = try reader.readString("a sequence's name")
            list.append(SequenceReservation(name: name, lastValue: try reader.readVarUInt("a sequence's last value")))
        }
        return list
    }
}
