import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A directory of log files kept in memory, under the very writer and reader that serve files on disk.
///
/// The seam is the lowest one, as in TigerBeetle's storage simulator and leveldb's in-memory `Env`: ``SystemCalls``
/// hands every call on a path inside a volume (`memory:<id>/<name>`), and on a descriptor opened there, to the
/// volume instead of the kernel. Everything above — framing, checksums, group commit, recovery, the atomic rewrite
/// of a compaction with its temporary file and rename — runs unchanged, so an in-memory store behaves exactly like
/// a store on disk. A path can only name a volume while the volume exists: `memory:` followed by a random UUID that
/// no file on disk is given, and a path that names no live volume is an ordinary relative path.
///
/// Locking is a no-op (no other process can reach the files), except that a process still refuses a second writer
/// of one file, as on disk. Syncs do nothing; descriptors are negative numbers, which no kernel hands out.
package final class MemoryVolume: Sendable {
    /// The volume's directory: files in it are `path/<name>`.
    package let path: String

    private let files = LockedValue<[String: MemoryFile]>([:])

    /// Creates an empty volume; it lives as long as a reference to it does.
    package init() {
        let uuid = LogUUID.random()
        path = Self.scheme + String(uuid.high, radix: 16) + String(uuid.low, radix: 16)
        Self.volumes.withLock { $0[path] = WeakVolume(volume: self) }
    }

    deinit { _ = Self.volumes.withLock { $0.removeValue(forKey: path) } }

    /// The path of the file `name` in this volume.
    package func file(_ name: String) -> String { FilePath.join(path, name) }

    // MARK: - Finding volumes and files

    private static let scheme = "memory:"

    private struct WeakVolume: Sendable {
        weak var volume: MemoryVolume?
    }

    /// The live volumes by path, so that ``SystemCalls`` can route a path; entries go with their volume.
    private static let volumes = LockedValue<[String: WeakVolume]>([:])

    /// The open descriptors of every volume's files.
    private static let descriptors = LockedValue<(next: Int32, open: [Int32: OpenMemoryFile])>((-2, [:]))

    /// The volume `path` lies in (or is), when it names a live one.
    static func containing(_ path: String) -> MemoryVolume? {
        guard path.hasPrefix(scheme) else { return nil }
        let root = path.firstIndex(of: "/").map { String(path[..<$0]) } ?? path
        return volumes.withLock { $0[root]?.volume }
    }

    /// The file a descriptor from ``open(_:flags:mode:)`` refers to; nil for the kernel's descriptors.
    static func file(descriptor: Int32) -> OpenMemoryFile? {
        guard descriptor < -1 else { return nil }
        return descriptors.withLock { $0.open[descriptor] }
    }

    private func name(of path: String) throws(LogFormatError) -> String {
        let name = String(path.dropFirst(self.path.count + 1))
        guard path.hasPrefix(self.path + "/"), !name.isEmpty, !name.contains("/") else {
            throw SystemCalls.failure("open", path: path, code: path == self.path ? EISDIR : ENOENT)
        }
        return name
    }

    // MARK: - Path operations

    func open(_ path: String, flags: Int32, mode: mode_t) throws(LogFormatError) -> Int32 {
        let name = try name(of: path)
        let file = try files.withLock { files throws(LogFormatError) -> MemoryFile in
            if let existing = files[name] {
                guard flags & (O_CREAT | O_EXCL) != O_CREAT | O_EXCL else {
                    throw SystemCalls.failure("open", path: path, code: EEXIST)
                }
                return existing
            }
            guard flags & O_CREAT != 0 else { throw SystemCalls.failure("open", path: path, code: ENOENT) }
            let created = MemoryFile(permissions: UInt32(mode) & 0o7777)
            files[name] = created
            return created
        }
        let opened = OpenMemoryFile(file: file, isWritable: flags & O_ACCMODE != O_RDONLY)
        return try Self.descriptors.withLock { table throws(LogFormatError) -> Int32 in
            guard table.next > Int32.min else { throw SystemCalls.failure("open", path: path, code: EMFILE) }
            let descriptor = table.next
            table.next -= 1
            table.open[descriptor] = opened
            return descriptor
        }
    }

    static func close(_ descriptor: Int32) {
        _ = descriptors.withLock { $0.open.removeValue(forKey: descriptor) }
    }

    /// `stat` of a path: the volume is a directory, its files regular files; nil when nothing is there.
    func status(atPath path: String) -> FileStatus? {
        if path == self.path { return FileStatus(directoryOf: self) }
        guard let name = try? name(of: path) else { return nil }
        return files.withLock { $0[name] }?.status
    }

    func rename(_ from: String, to: String) throws(LogFormatError) {
        let (source, target) = (try name(of: from), try name(of: to))
        try files.withLock { files throws(LogFormatError) in
            guard let file = files.removeValue(forKey: source) else {
                throw SystemCalls.failure("rename to \(to)", path: from, code: ENOENT)
            }
            files[target] = file
        }
    }

    func link(_ from: String, to: String) throws(LogFormatError) {
        let (source, target) = (try name(of: from), try name(of: to))
        try files.withLock { files throws(LogFormatError) in
            guard let file = files[source] else { throw SystemCalls.failure("link to \(to)", path: from, code: ENOENT) }
            guard files[target] == nil else { throw SystemCalls.failure("link to \(to)", path: from, code: EEXIST) }
            files[target] = file
        }
    }

    func unlink(_ path: String) {
        guard let name = try? name(of: path) else { return }
        _ = files.withLock { $0.removeValue(forKey: name) }
    }

    func listDirectory(_ path: String) -> [String] {
        path == self.path ? files.withLock { Array($0.keys) } : []
    }
}

/// One file of a ``MemoryVolume``: its bytes and what `stat` reports. Files are reached through descriptors
/// (``OpenMemoryFile``), which keep a file readable after it was renamed over or unlinked, as on disk.
final class MemoryFile: Sendable {
    private static let nextInode = Atomic<UInt64>(1)

    struct Contents {
        var bytes: [UInt8] = []
        var permissions: UInt32
        var owner: UInt32 = UInt32(getuid())
        var group: UInt32 = UInt32(getgid())
    }

    let identity: FileIdentity
    let contents: LockedValue<Contents>

    init(permissions: UInt32) {
        // No device has number 2⁶⁴−1, so a memory file's identity never equals a file's on disk.
        identity = FileIdentity(
            device: UInt64.max, inode: Self.nextInode.wrappingAdd(1, ordering: .relaxed).oldValue)
        contents = LockedValue(Contents(permissions: permissions))
    }

    var status: FileStatus {
        contents.withLock {
            FileStatus(
                identity: identity, kind: .regular, permissions: $0.permissions, owner: $0.owner, group: $0.group)
        }
    }
}

/// An open descriptor of a memory file: the calls ``SystemCalls`` makes on descriptors.
struct OpenMemoryFile: Sendable {
    let file: MemoryFile
    let isWritable: Bool

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) -> Int {
        file.contents.withLock { contents in
            guard offset < UInt64(contents.bytes.count) else { return 0 }
            let start = Int(offset)
            let count = min(buffer.count, contents.bytes.count - start)
            contents.bytes.withUnsafeBytes { bytes in
                buffer.baseAddress!.copyMemory(from: bytes.baseAddress! + start, byteCount: count)
            }
            return count
        }
    }

    func write(_ buffer: UnsafeRawBufferPointer, at offset: UInt64, path: String) throws(LogFormatError) {
        guard isWritable else { throw SystemCalls.failure("write", path: path, code: EBADF, offset: offset) }
        guard offset <= UInt64(Int.max - buffer.count) else {
            throw SystemCalls.failure("write", path: path, code: EFBIG, offset: offset)
        }
        file.contents.withLock { contents in
            let end = Int(offset) + buffer.count
            if end > contents.bytes.count {
                contents.bytes.append(contentsOf: repeatElement(0, count: end - contents.bytes.count))
            }
            contents.bytes.withUnsafeMutableBytes { bytes in
                UnsafeMutableRawBufferPointer(rebasing: bytes[Int(offset)..<end]).copyMemory(from: buffer)
            }
        }
    }

    func truncate(to length: UInt64, path: String) throws(LogFormatError) {
        guard isWritable, length <= UInt64(Int.max) else {
            throw SystemCalls.failure("truncate to \(length) bytes", path: path, code: isWritable ? EFBIG : EINVAL)
        }
        file.contents.withLock { contents in
            let length = Int(length)
            if length < contents.bytes.count {
                contents.bytes.removeSubrange(length...)
            } else {
                contents.bytes.append(contentsOf: repeatElement(0, count: length - contents.bytes.count))
            }
        }
    }

    var size: UInt64 { file.contents.withLock { UInt64($0.bytes.count) } }

    func change(permissions: UInt32? = nil, owner: UInt32? = nil, group: UInt32? = nil) {
        file.contents.withLock { contents in
            if let permissions { contents.permissions = permissions & 0o7777 }
            if let owner { contents.owner = owner }
            if let group { contents.group = group }
        }
    }
}

extension FileStatus {
    init(identity: FileIdentity, kind: Kind, permissions: UInt32, owner: UInt32, group: UInt32) {
        self.identity = identity
        self.kind = kind
        self.permissions = permissions
        self.owner = owner
        self.group = group
    }

    /// A volume's `stat`: a directory that only this process can reach.
    init(directoryOf volume: MemoryVolume) {
        self.init(
            identity: FileIdentity(device: UInt64.max, inode: 0), kind: .directory, permissions: 0o700,
            owner: UInt32(getuid()), group: UInt32(getgid()))
    }
}

extension MemoryVolume {
    /// The volume both paths of a rename or link lie in; nil when neither is in one, and `EXDEV` (as across file
    /// systems) when only one is or they are in different volumes.
    static func containing(_ from: String, _ to: String, _ operation: String) throws(LogFormatError) -> MemoryVolume? {
        let (source, target) = (containing(from), containing(to))
        if source == nil && target == nil { return nil }
        guard let source, source === target else {
            throw SystemCalls.failure("\(operation) to \(to)", path: from, code: EXDEV)
        }
        return source
    }
}
