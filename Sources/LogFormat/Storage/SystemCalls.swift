// Every C call LogFormat makes goes through this file: C return codes become Swift errors in one place,
// interrupted calls are retried, and short reads and writes are completed. A path inside a ``MemoryVolume``, and a
// descriptor opened there, is served by the volume instead (the first line of each call), so that an in-memory
// log runs every line of the log code above this file.
internal import CWriteback

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum SystemCalls {
    static var errno: Int32 {
        #if canImport(Glibc)
            Glibc.errno
        #else
            Darwin.errno
        #endif
    }

    static func errorText(_ code: Int32) -> String { String(cString: strerror(code)) }

    static func failure(_ what: String, path: String, code: Int32 = errno, offset: UInt64? = nil) -> LogFormatError {
        LogFormatError(
            .io, "\(what) failed: \(errorText(code)) (errno \(code))", path: path, byteOffset: offset,
            systemErrno: code)
    }

    static func open(_ path: String, flags: Int32, mode: mode_t = 0o600) throws(LogFormatError) -> Int32 {
        if let volume = MemoryVolume.containing(path) { return try volume.open(path, flags: flags, mode: mode) }
        while true {
            let fd = path.withCString { Glibc_open($0, flags | O_CLOEXEC, mode) }
            if fd >= 0 { return fd }
            if errno != EINTR { throw failure("open", path: path) }
        }
    }

    /// Reads exactly `buffer.count` bytes unless the file ends first; returns the number read.
    static func pread(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, at offset: UInt64, path: String)
        throws(LogFormatError) -> Int
    {
        if let memory = MemoryVolume.file(descriptor: fd) { return memory.read(into: buffer, at: offset) }
        var done = 0
        while done < buffer.count {
            let n = Glibc_pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n > 0 {
                done += n
            } else if n == 0 {
                break
            } else if errno != EINTR {
                throw failure("read", path: path, offset: offset + UInt64(done))
            }
        }
        return done
    }

    static func pwrite(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, at offset: UInt64, path: String)
        throws(LogFormatError)
    {
        if let memory = MemoryVolume.file(descriptor: fd) { return try memory.write(buffer, at: offset, path: path) }
        var done = 0
        while done < buffer.count {
            let n = Glibc_pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n > 0 {
                done += n
            } else if n < 0 && errno != EINTR {
                throw failure("write", path: path, offset: offset + UInt64(done))
            } else if n == 0 {
                throw failure("write", path: path, code: ENOSPC, offset: offset + UInt64(done))
            }
        }
    }

    static func dataSync(_ fd: Int32, path: String) throws(LogFormatError) {
        if MemoryVolume.file(descriptor: fd) != nil { return }
        #if canImport(Darwin)
            let result = fcntl(fd, F_FULLFSYNC)
        #else
            let result = fdatasync(fd)
        #endif
        if result != 0 { throw failure("fdatasync", path: path) }
    }

    /// Starts the writeback of `count` bytes at `offset` without waiting for it (`eg_start_writeback`): a hint,
    /// whose failure is ignored because the sync that follows reports any error of these bytes.
    static func startWriteback(_ fd: Int32, at offset: UInt64, count: Int) {
        if MemoryVolume.file(descriptor: fd) != nil { return }
        guard let start = Int64(exactly: offset), count > 0 else { return }
        _ = eg_start_writeback(fd, start, Int64(count))
    }

    static func fullSync(_ fd: Int32, path: String) throws(LogFormatError) {
        if MemoryVolume.file(descriptor: fd) != nil { return }
        if fsync(fd) != 0 { throw failure("fsync", path: path) }
    }

    static func truncate(_ fd: Int32, to length: UInt64, path: String) throws(LogFormatError) {
        if let memory = MemoryVolume.file(descriptor: fd) { return try memory.truncate(to: length, path: path) }
        while ftruncate(fd, off_t(length)) != 0 {
            if errno != EINTR { throw failure("truncate to \(length) bytes", path: path) }
        }
    }

    static func fileSize(_ fd: Int32, path: String) throws(LogFormatError) -> UInt64 {
        if let memory = MemoryVolume.file(descriptor: fd) { return memory.size }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("stat", path: path) }
        return UInt64(info.st_size)
    }

    static func exists(_ path: String) -> Bool {
        if let volume = MemoryVolume.containing(path) { return volume.status(atPath: path) != nil }
        var info = stat()
        return stat(path, &info) == 0
    }

    /// `fstat` of an open file.
    static func status(_ fd: Int32, path: String) throws(LogFormatError) -> FileStatus {
        if let memory = MemoryVolume.file(descriptor: fd) { return memory.file.status }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("stat", path: path) }
        return FileStatus(info)
    }

    /// `stat` (following symbolic links) or `lstat` of a path; nil when nothing is there.
    static func status(atPath path: String, followingLinks: Bool) throws(LogFormatError) -> FileStatus? {
        if let volume = MemoryVolume.containing(path) { return volume.status(atPath: path) }
        var info = stat()
        let result = followingLinks ? stat(path, &info) : lstat(path, &info)
        if result == 0 { return FileStatus(info) }
        if errno == ENOENT { return nil }
        throw failure(followingLinks ? "stat" : "lstat", path: path)
    }

    /// The target a symbolic link holds, as written in the link.
    static func readLink(_ path: String) throws(LogFormatError) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { throw failure("readlink", path: path) }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Clears `O_NONBLOCK` (set to open a path without waiting on a FIFO) once the file is known to be regular.
    static func setBlocking(_ fd: Int32, path: String) throws(LogFormatError) {
        if MemoryVolume.file(descriptor: fd) != nil { return }
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 else { throw failure("fcntl", path: path) }
    }

    static func changePermissions(_ fd: Int32, to permissions: UInt32, path: String) throws(LogFormatError) {
        if let memory = MemoryVolume.file(descriptor: fd) { return memory.change(permissions: permissions) }
        guard fchmod(fd, mode_t(permissions)) == 0 else {
            throw failure("setting permissions \(String(permissions, radix: 8))", path: path)
        }
    }

    static func changeOwner(_ fd: Int32, owner: UInt32, group: UInt32, path: String) throws(LogFormatError) {
        if let memory = MemoryVolume.file(descriptor: fd) { return memory.change(owner: owner, group: group) }
        guard fchown(fd, uid_t(owner), gid_t(group)) == 0 else {
            throw failure("setting owner \(owner) and group \(group)", path: path)
        }
    }

    /// The contents of a small file read with `read(2)` (for kernel files such as `/proc/locks`, which have no
    /// size); nil when it cannot be read or is longer than `byteLimit`.
    static func readSmallFile(_ path: String, byteLimit: Int) -> [UInt8]? {
        let fd = path.withCString { Glibc_open($0, O_RDONLY | O_CLOEXEC, 0) }
        guard fd >= 0 else { return nil }
        defer { _ = Glibc_close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while bytes.count <= byteLimit {
            let n = chunk.withUnsafeMutableBytes { Glibc_read(fd, $0.baseAddress!, $0.count) }
            if n > 0 {
                bytes += chunk.prefix(n)
            } else if n == 0 {
                return bytes
            } else if errno != EINTR {
                return nil
            }
        }
        return nil
    }

    static func close(_ fd: Int32) {
        if fd < -1 { return MemoryVolume.close(fd) }
        _ = Glibc_close(fd)  // close errors are not actionable after fdatasync; the fd is gone either way
    }

    static func rename(_ from: String, to: String) throws(LogFormatError) {
        if let volume = try MemoryVolume.containing(from, to, "rename") { return try volume.rename(from, to: to) }
        guard Glibc_rename(from, to) == 0 else { throw failure("rename to \(to)", path: from) }
    }

    static func link(_ from: String, to: String) throws(LogFormatError) {
        if let volume = try MemoryVolume.containing(from, to, "link") { return try volume.link(from, to: to) }
        guard Glibc_link(from, to) == 0 else { throw failure("link to \(to)", path: from) }
    }

    static func unlink(_ path: String) {
        if let volume = MemoryVolume.containing(path) { return volume.unlink(path) }
        _ = Glibc_unlink(path)
    }

    /// fsync of the directory holding `path`, so a rename or create in it is durable.
    static func syncDirectory(of path: String) throws(LogFormatError) {
        if MemoryVolume.containing(path) != nil { return }
        let directory = FilePath.directory(of: path)
        let fd = try open(directory, flags: O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        if fsync(fd) != 0 { throw failure("fsync of directory", path: directory) }
    }

    /// Names in a directory (without "." and "..").
    static func listDirectory(_ path: String) -> [String] {
        if let volume = MemoryVolume.containing(path) { return volume.listDirectory(path) }
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func processID() -> Int32 { getpid() }

    /// Maps `byteCount` bytes of zeroed, private memory of their own (no malloc arena holds them: unmapping them
    /// gives them back to the system whichever thread wrote them); `nil` when the system refuses.
    static func mapMemory(byteCount: Int) -> UnsafeMutableRawPointer? {
        guard byteCount > 0 else { return nil }
        let address = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let address, address != MAP_FAILED else { return nil }
        #if os(Linux)
            // Pages of 4 KiB, even where transparent huge pages are always on: a caller that writes only the first
            // part of each megabyte (a frame body compressed to half) keeps only those pages.
            _ = madvise(address, byteCount, MADV_NOHUGEPAGE)
        #endif
        return address
    }

    /// Unmaps memory mapped by ``mapMemory(byteCount:)``.
    static func unmapMemory(_ address: UnsafeMutableRawPointer, byteCount: Int) {
        _ = munmap(address, byteCount)
    }

    /// Releases a `flock` taken with ``tryExclusiveLock(_:path:)`` (closing the descriptor would too).
    static func unlock(_ fd: Int32) {
        if MemoryVolume.file(descriptor: fd) != nil { return }
        _ = flock(fd, LOCK_UN)
    }

    /// Tries to take an exclusive `flock` without blocking; returns false when another open file holds it.
    static func tryExclusiveLock(_ fd: Int32, path: String) throws(LogFormatError) -> Bool {
        // No other process reaches a memory file; a second writer in this process is refused by `StoreLock`.
        if MemoryVolume.file(descriptor: fd) != nil { return true }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EWOULDBLOCK || code == EAGAIN { return false }
            if code != EINTR { throw failure("flock", path: path, code: code) }
        }
        return true
    }
}

// Unambiguous names for the C functions that share names with the wrappers above.
@inline(__always) private func Glibc_open(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 {
    open(path, flags, mode)
}
@inline(__always) private func Glibc_pread(_ fd: Int32, _ buf: UnsafeMutableRawPointer, _ n: Int, _ off: off_t) -> Int {
    pread(fd, buf, n, off)
}
@inline(__always) private func Glibc_pwrite(_ fd: Int32, _ buf: UnsafeRawPointer, _ n: Int, _ off: off_t) -> Int {
    pwrite(fd, buf, n, off)
}
@inline(__always) private func Glibc_read(_ fd: Int32, _ buf: UnsafeMutableRawPointer, _ n: Int) -> Int {
    read(fd, buf, n)
}
@inline(__always) private func Glibc_close(_ fd: Int32) -> Int32 { close(fd) }
@inline(__always) private func Glibc_rename(_ a: String, _ b: String) -> Int32 { rename(a, b) }
@inline(__always) private func Glibc_link(_ a: String, _ b: String) -> Int32 { link(a, b) }
@inline(__always) private func Glibc_unlink(_ a: String) -> Int32 { unlink(a) }
