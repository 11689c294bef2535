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

extension FilePath {
    /// The most symbolic links followed in a row before giving up (Linux's own limit).
    static let maxSymbolicLinkCount = 40

    /// `path` with symbolic links in its last component followed to the file they name, which need not exist.
    ///
    /// Whatever replaces or creates the log (a rewrite's rename, creation) must act on that file: renaming over a
    /// link would replace the link, and from then on its two names would be two stores. Links in the directory part
    /// need no resolving, because a rename into a directory reached through a link lands in the real directory.
    static func resolvingSymbolicLinks(_ path: String) throws(LogFormatError) -> String {
        var current = path
        for _ in 0...maxSymbolicLinkCount {
            guard let status = try SystemCalls.status(atPath: current, followingLinks: false),
                status.kind == .symbolicLink
            else { return current }
            let target = try SystemCalls.readLink(current)
            current = target.hasPrefix("/") ? target : join(directory(of: current), target)
        }
        throw LogFormatError(
            .invalidArgument, "has more than \(maxSymbolicLinkCount) symbolic links in a row (a loop?)", path: path)
    }
}
