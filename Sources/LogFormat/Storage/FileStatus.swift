#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file's identity independent of the path used to reach it.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
}

/// What `stat` says about a file, in the terms the log needs.
struct FileStatus: Hashable, Sendable {
    /// What kind of file it is: only a regular file can be a log.
    enum Kind: Hashable, Sendable {
        case regular, directory, fifo, socket, characterDevice, blockDevice, symbolicLink, other

        /// The kind with an article, for errors ("is a FIFO (named pipe), not an EventGraph log").
        var phrase: String {
            switch self {
            case .regular: "a regular file"
            case .directory: "a directory"
            case .fifo: "a FIFO (named pipe)"
            case .socket: "a socket"
            case .characterDevice: "a character device"
            case .blockDevice: "a block device"
            case .symbolicLink: "a symbolic link"
            case .other: "not a regular file"
            }
        }
    }

    var identity: FileIdentity
    var kind: Kind
    /// The permission bits (including set-id and sticky bits).
    var permissions: UInt32
    var owner: UInt32
    var group: UInt32

    init(_ info: stat) {
        identity = FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        kind =
            switch info.st_mode & S_IFMT {
            case S_IFREG: .regular
            case S_IFDIR: .directory
            case S_IFIFO: .fifo
            case S_IFSOCK: .socket
            case S_IFCHR: .characterDevice
            case S_IFBLK: .blockDevice
            case S_IFLNK: .symbolicLink
            default: .other
            }
        permissions = UInt32(info.st_mode) & 0o7777
        owner = UInt32(info.st_uid)
        group = UInt32(info.st_gid)
    }

    /// The error for a path that is not a regular file.
    func notALog(path: String) -> LogFormatError {
        LogFormatError(.notALog, "is \(kind.phrase), not an EventGraph log", path: path)
    }
}
