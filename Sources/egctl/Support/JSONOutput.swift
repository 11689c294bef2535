import Foundation

/// JSON output.
enum JSONOutput {
    /// Prints one JSON document (sorted keys, so output is stable for scripts).
    static func print(_ object: Any, pretty: Bool = true) {
        var options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
        if pretty { options.insert(.prettyPrinted) }
        let data = try! JSONSerialization.data(withJSONObject: object, options: options)
        Swift.print(String(decoding: data, as: UTF8.self))
    }
}
