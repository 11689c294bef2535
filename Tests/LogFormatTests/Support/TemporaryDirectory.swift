import Foundation

/// A temporary directory removed when the value is destroyed.
final class TemporaryDirectory {
    let path: String

    /// - Parameter inMemory: use a RAM-backed file system (`/dev/shm`) when there is one, for tests that make
    ///   thousands of `fdatasync` calls and check logic rather than the disk.
    init(_ name: String = #function, inMemory: Bool = false) {
        let base =
            inMemory && FileManager.default.fileExists(atPath: "/dev/shm")
            ? "/dev/shm" : FileManager.default.temporaryDirectory.path
        let safe = name.filter { $0.isLetter || $0.isNumber }
        path = "\(base)/eg-\(safe.prefix(40))-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A path inside the directory.
    func file(_ name: String) -> String { path + "/" + name }
}
