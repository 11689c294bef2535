/// Names and cleanup of the temporary files used by creation and rewrite.
///
/// A temporary file is `.<log name>.<purpose>-<random>` next to the log, so that the rename into place stays in
/// one directory (and one file system) and leftovers are recognisable.
package enum AtomicRewrite {
    static func temporaryPath(for path: String, purpose: String) -> String {
        let random = LogUUID.random()
        let name = ".\(FilePath.lastComponent(of: path)).\(purpose)-\(String(random.high, radix: 16))"
        return FilePath.join(FilePath.directory(of: path), name)
    }

    /// Removes temporary files an interrupted create or rewrite left next to `path`; returns their paths.
    ///
    /// Only a process holding the writer lock may call this (another writer could be mid-rewrite otherwise).
    static func removeLeftovers(of path: String) -> [String] {
        let directory = FilePath.directory(of: path)
        let prefix = ".\(FilePath.lastComponent(of: path))."
        var removed: [String] = []
        for name in SystemCalls.listDirectory(directory) where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            guard rest.hasPrefix("rewrite-") || rest.hasPrefix("create-") || rest.hasPrefix("salvage-") else {
                continue
            }
            let leftover = FilePath.join(directory, name)
            SystemCalls.unlink(leftover)
            removed.append(leftover)
        }
        return removed
    }
}

/// Encodes a payload, turning any error into a LogFormatError.
func encode(_ body: () throws -> [UInt8]) throws(LogFormatError) -> [UInt8] {
    do { return try body() } catch let error as LogFormatError { throw error } catch {
        throw LogFormatError(.malformedPayload, "payload does not encode: \(error)")
    }
}
