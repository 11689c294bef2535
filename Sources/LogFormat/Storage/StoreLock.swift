import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one-writer-per-store lock: an exclusive `flock` on `<log path>.lock`, never a POSIX lock on the log itself
/// (POSIX locks are dropped when *any* descriptor of the file is closed in the process, which SQLite documents as
/// its most painful portability trap). The holder's pid is written into the lock file so that a second writer's
/// error can name it. Read-only openers take no lock.
final class StoreLock: Sendable {
    let path: String
    private let descriptor: Int32

    /// The lock file's path for a log at `logPath`.
    static func lockPath(for logPath: String) -> String { logPath + ".lock" }

    /// The lock files this process holds, by device and inode (paths can differ for the same file). A pthread
    /// mutex rather than `Synchronization.Mutex`, whose futex the thread sanitizer cannot see on Linux.
    private static let heldHere = ConditionLock<Set<FileIdentity>>([])
    private let identity: FileIdentity
    private let isReleased = Atomic<Bool>(false)

    /// Takes the lock or throws ``LogFormatError/Code/locked`` naming the holder's pid.
    init(logPath: String) throws(LogFormatError) {
        path = Self.lockPath(for: logPath)
        descriptor = try SystemCalls.open(path, flags: O_RDWR | O_CREAT)
        identity = (try? SystemCalls.fileIdentity(descriptor, path: path)) ?? FileIdentity(device: 0, inode: 0)
        if identity.inode != 0, Self.heldHere.withLock({ $0.value.contains(identity) }) {
            SystemCalls.close(descriptor)
            throw LogFormatError(
                .locked,
                "the store is already open for writing in this process (pid \(SystemCalls.processID())); use that "
                    + "writer, or close it first",
                path: logPath)
        }
        let acquired: Bool
        do {
            acquired = try SystemCalls.tryExclusiveLock(descriptor, path: path)
        } catch {
            SystemCalls.close(descriptor)
            throw error
        }
        guard acquired else {
            var buffer = [UInt8](repeating: 0, count: 32)
            let n = buffer.withUnsafeMutableBytes { b in (try? SystemCalls.pread(descriptor, b, at: 0, path: path)) ?? 0
            }
            SystemCalls.close(descriptor)
            let holder = String(decoding: buffer.prefix(n), as: UTF8.self).split(separator: "\n").first.map(String.init)
            throw LogFormatError(
                .locked,
                "the store is in use by another process (pid \(holder ?? "unknown")); close it there first or open "
                    + "read-only",
                path: logPath)
        }
        _ = Self.heldHere.withLock { $0.value.insert(identity) }
        let pid = Array("\(SystemCalls.processID())\n".utf8)
        _ = try? SystemCalls.truncate(descriptor, to: 0, path: path)
        pid.withUnsafeBytes { b in _ = try? SystemCalls.pwrite(descriptor, b, at: 0, path: path) }
    }

    /// Releases the lock before the value is destroyed (a closed writer must not keep the store locked).
    func release() {
        guard !isReleased.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // LOCK_UN releases the lock of the open file description itself, even if a child process forked by this
        // one still shares the description (between its fork and exec): merely closing our descriptor would leave
        // the store locked until that child execs.
        SystemCalls.unlock(descriptor)
        _ = Self.heldHere.withLock { $0.value.remove(identity) }
    }

    deinit {
        release()
        // The lock file stays: deleting it would race with a process that has just opened it to lock it.
        SystemCalls.close(descriptor)
    }
}
