package import Foundation
package import LogFormat

// How values look to people and in JSON, in one place: the library's messages, `StoredValue`'s description and
// every egctl command print values through these.

extension AttributeValue {
    /// The value for people: strings quoted (long ones clipped), dates in ISO 8601, binary values by length.
    package var displayText: String {
        switch self {
        case .null: "null"
        case .int16(let v): "\(v)"
        case .int32(let v): "\(v)"
        case .int64(let v): "\(v)"
        case .double(let v): "\(v)"
        case .float(let v): "\(v)"
        case .bool(let v): "\(v)"
        case .string(let v): Self.quoted(v)
        case .date(let v): Self.dateText(secondsSinceReferenceDate: v)
        case .uuid(let v): "\(v)"
        case .url(let v): "<\(v)>"
        case .decimal(let v): v
        case .binary(let v): "<\(v.count) bytes>"
        case .blob(let r): "<\(r.byteCount) bytes, external (transaction \(r.transactionID) blob \(r.index))>"
        case .transformable(let v): "<transformable, \(v.count) bytes>"
        }
    }

    /// The value as a JSON-compatible object for `JSONSerialization`: numbers, strings, `NSNull`, and objects for
    /// binary values. Non-finite numbers, which JSON cannot hold, are strings.
    package var jsonObject: Any {
        switch self {
        case .null: NSNull()
        case .int16(let v): Int(v)
        case .int32(let v): Int(v)
        case .int64(let v): v
        case .double(let v): v.isFinite ? v as Any : "\(v)"
        case .float(let v): v.isFinite ? Double(v) as Any : "\(v)"
        case .bool(let v): v
        case .string(let v): v
        case .date(let v): Self.dateText(secondsSinceReferenceDate: v)
        case .uuid(let v): "\(v)"
        case .url(let v): v
        case .decimal(let v): v
        case .binary(let v): ["base64": Data(v).base64EncodedString()]
        case .blob(let r):
            ["external": ["transaction": r.transactionID, "index": Int(r.index), "byteCount": r.byteCount]]
        case .transformable(let v): ["transformable": Data(v).base64EncodedString()]
        }
    }

    /// A date as ISO 8601, or as what it is when it is no point in time: `-inf`, `inf` or `nan` (the way doubles
    /// print), never a formatter's far-future date or an empty string.
    package static func dateText(secondsSinceReferenceDate seconds: Double) -> String {
        guard seconds.isFinite else { return "\(seconds)" }
        return Date(timeIntervalSinceReferenceDate: seconds).iso8601Text
    }

    /// A string in double quotes, with quotes and newlines escaped and more than `limit` characters clipped.
    package static func quoted(_ text: String, limit: Int = 80) -> String {
        let clipped = text.count > limit ? String(text.prefix(limit)) + "…" : text
        return "\"" + clipped.replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
            + "\""
    }
}

extension Date {
    /// A commit time as the log records it, in microseconds since 1970.
    package init(commitTimeMicroseconds microseconds: Int64) {
        self.init(timeIntervalSince1970: Double(microseconds) / 1e6)
    }

    /// ISO 8601 with milliseconds, in UTC.
    package var iso8601Text: String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: self)
    }
}
