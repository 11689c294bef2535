/// Path arithmetic on plain strings (LogFormat does not import Foundation).
enum FilePath {
    /// The directory part of `path` ("." when there is none).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    /// The last component of `path`.
    static func lastComponent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// `directory/name`.
    static func join(_ directory: String, _ name: String) -> String {
        directory == "." ? name : directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
