import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one-writer-per-store lock: an exclusive `flock` on the log file itself.
///
/// The lock belongs to the file (its inode), not to a name, so a symlink, a hard link or a bind mount of the log
/// cannot give a second writer a lock of its own. `flock` rather than a POSIX record lock: a POSIX lock is dropped
/// when *any* descriptor of the file is closed in the process (SQLite's most painful portability trap), while a
/// `flock` belongs to one open file description, which only this class opens and closes. A compaction renames a
/// new file over the log, so it locks the new file before the rename (``lockingNewFile(at:)``), and an opener
/// checks after locking that the path still names the file it locked.
///
/// No pid is written anywhere (a lock file could be a planted symlink): the kernel knows who holds a `flock`, and
/// a second writer's error names that process from `/proc/locks`. Read-only openers take no lock.
final class StoreLock: Sendable {
    /// The locked file.
    let identity: FileIdentity
    private let descriptor: Int32
    private let isReleased = Atomic<Bool>(false)

    /// The files this process holds the lock of.
    private static let heldHere = LockedValue<Set<FileIdentity>>([])

    private init(descriptor: Int32, identity: FileIdentity) {
        self.descriptor = descriptor
        self.identity = identity
    }

    /// Locks the existing log at `path` (its symlinks resolved); nil when there is no file there.
    ///
    /// - Throws: ``LogFormatError/Code/locked`` naming the process that holds the lock (this one, when another
    ///   writer of this process has the file open by any name), `.notALog` when `path` is not a regular file.
    static func lockingExistingFile(at path: String, displayPath: String) throws(LogFormatError) -> StoreLock? {
        // A compaction in another process may rename a new file over the log between our open and our lock; then
        // the lock we got is on a file that is no longer the store, and we try again on the new one.
        for _ in 0..<100 {
            let descriptor: Int32
            do {
                descriptor = try RegularFile.open(path, flags: O_RDONLY)
            } catch let error where error.systemErrno == ENOENT {
                return nil
            }
            let identity: FileIdentity
            do {
                identity = try SystemCalls.status(descriptor, path: path).identity
                try take(descriptor, identity: identity, displayPath: displayPath)
            } catch {
                SystemCalls.close(descriptor)
                throw error
            }
            let lock = StoreLock(descriptor: descriptor, identity: identity)  // owns the descriptor from here
            if try SystemCalls.status(atPath: path, followingLinks: true)?.identity == identity { return lock }
        }
        throw LogFormatError(.locked, "kept being replaced while it was being opened; try again", path: displayPath)
    }

    /// Locks a file this process has just created and nobody else knows yet (a rewrite's temporary file, before
    /// it is renamed over the log, so that the store is never unlocked).
    static func lockingNewFile(at path: String) throws(LogFormatError) -> StoreLock {
        let descriptor = try RegularFile.open(path, flags: O_RDONLY)
        do {
            let identity = try SystemCalls.status(descriptor, path: path).identity
            try take(descriptor, identity: identity, displayPath: path)
            return StoreLock(descriptor: descriptor, identity: identity)
        } catch {
            SystemCalls.close(descriptor)
            throw error
        }
    }

    /// Takes the `flock` and records the file as held here, or throws naming the holder.
    private static func take(_ descriptor: Int32, identity: FileIdentity, displayPath: String) throws(LogFormatError) {
        try heldHere.withLock { (held: inout Set<FileIdentity>) throws(LogFormatError) in
            guard !held.contains(identity) else {
                throw LogFormatError(
                    .locked,
                    "the store is already open for writing in this process (pid \(SystemCalls.processID())), "
                        + "perhaps by another name; use that writer, or close it first",
                    path: displayPath)
            }
            guard try SystemCalls.tryExclusiveLock(descriptor, path: displayPath) else {
                let holder = LockHolders.processID(holding: identity).map { "\($0)" } ?? "unknown"
                throw LogFormatError(
                    .locked,
                    "the store is in use by another process (pid \(holder)); close it there first or open read-only",
                    path: displayPath)
            }
            held.insert(identity)
        }
    }

    /// Releases the lock and closes the file (a closed writer, even a poisoned one, must not keep the store).
    func release() {
        guard !isReleased.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // LOCK_UN releases the lock of the open file description itself, even if a child process forked by this
        // one still shares the description (between its fork and exec): merely closing our descriptor would leave
        // the store locked until that child execs.
        SystemCalls.unlock(descriptor)
        SystemCalls.close(descriptor)
        _ = Self.heldHere.withLock { $0.remove(identity) }
    }

    deinit { release() }
}
