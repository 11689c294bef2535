import Foundation

/// A directory under the system's temporary directory, removed when the fixture is released.
final class TemporaryDirectory {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "eventgraph-tests-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A path for a store file inside the directory.
    func file(_ name: String = "store.eglog") -> String { path + "/" + name }

    /// The size of a file in bytes.
    func byteCount(_ name: String = "store.eglog") -> UInt64 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: file(name))
        return (attributes?[.size] as? NSNumber)?.uint64Value ?? 0
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}
