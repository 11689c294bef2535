#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opens paths that must be regular files: a log, its temporary files, the file a lock is taken on.
///
/// A FIFO, a socket, a device or a directory is refused with an error naming the path and what it is, and the open
/// never waits: opening a FIFO for reading blocks until a writer appears, so the path is opened with `O_NONBLOCK`
/// (cleared again once `fstat` has shown a regular file).
enum RegularFile {
    /// Opens `path` with `flags` (`O_CLOEXEC` is always added). With `O_CREAT | O_EXCL` the new file gets exactly
    /// `permissions`, whatever the process umask: a store's mode is a deliberate choice, and it holds an app's whole
    /// data and history.
    static func open(_ path: String, flags: Int32, permissions: UInt32 = 0o600) throws(LogFormatError) -> Int32 {
        precondition(permissions & ~0o777 == 0, "a log's permissions are rwx bits only, not \(permissions)")
        // Look before opening, so that a device is never opened (opening some has effects); then check what was
        // actually opened, since the path can change in between.
        if flags & O_CREAT == 0, let status = try SystemCalls.status(atPath: path, followingLinks: true),
            status.kind != .regular
        {
            throw status.notALog(path: path)
        }
        let descriptor: Int32
        do {
            descriptor = try SystemCalls.open(path, flags: flags | O_NONBLOCK | O_NOCTTY, mode: mode_t(permissions))
        } catch {
            if error.systemErrno == EISDIR {
                throw LogFormatError(.notALog, "is a directory, not an EventGraph log", path: path)
            }
            throw error
        }
        do throws(LogFormatError) {
            let status = try SystemCalls.status(descriptor, path: path)
            guard status.kind == .regular else { throw status.notALog(path: path) }
            if flags & (O_CREAT | O_EXCL) == O_CREAT | O_EXCL {
                try SystemCalls.changePermissions(descriptor, to: permissions, path: path)
            }
            try SystemCalls.setBlocking(descriptor, path: path)
            return descriptor
        } catch {
            SystemCalls.close(descriptor)
            throw error
        }
    }
}
