#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An open file descriptor with the operations the log needs, each passing through the optional fault injector.
///
/// Not copyable: the descriptor is closed exactly once, when the value is consumed or destroyed.
struct LogFile: ~Copyable {
    let descriptor: Int32
    let path: String
    let faults: FaultInjector?

    /// Opens `path`, which must be a regular file (see ``RegularFile``); a file created here (`O_CREAT | O_EXCL`)
    /// gets exactly `permissions`.
    init(path: String, flags: Int32, permissions: UInt32 = 0o600, faults: FaultInjector?) throws(LogFormatError) {
        self.descriptor = try RegularFile.open(path, flags: flags, permissions: permissions)
        self.path = path
        self.faults = faults
    }

    deinit { SystemCalls.close(descriptor) }

    func size() throws(LogFormatError) -> UInt64 { try SystemCalls.fileSize(descriptor, path: path) }

    func status() throws(LogFormatError) -> FileStatus { try SystemCalls.status(descriptor, path: path) }

    /// Gives this file the permission bits, owner and group of another (a rewrite's new file takes the old one's).
    ///
    /// The owner is changed only when it differs, so that a user rewriting their own file needs no privilege; when
    /// it differs and cannot be changed, the rewrite must fail rather than hand the store to another user.
    func takeOwnershipAndMode(of other: FileStatus) throws(LogFormatError) {
        let mine = try status()
        if mine.owner != other.owner || mine.group != other.group {
            // chown clears set-id bits, so it comes before chmod.
            try SystemCalls.changeOwner(descriptor, owner: other.owner, group: other.group, path: path)
        }
        try SystemCalls.changePermissions(descriptor, to: other.permissions, path: path)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(LogFormatError) -> Int {
        try checkReadFault(at: offset)
        return try SystemCalls.pread(descriptor, buffer, at: offset, path: path)
    }

    /// Asks the fault injector (if any) before a read: its read hook runs, and an armed read failure is thrown.
    private func checkReadFault(at offset: UInt64) throws(LogFormatError) {
        guard let faults else { return }
        faults.willRead(path: path, at: offset)
        if let code = faults.readFailure(at: offset) {
            throw SystemCalls.failure("pread (injected)", path: path, code: code, offset: offset)
        }
    }

    /// Reads up to `count` bytes at `offset` (fewer at the end of the file).
    func read(count: Int, at offset: UInt64) throws(LogFormatError) -> [UInt8] {
        try checkReadFault(at: offset)
        let descriptor = self.descriptor
        let path = self.path
        // Not zeroed first: only the bytes `pread` filled are kept (a short read at the end of the file keeps fewer).
        var failure: LogFormatError?
        let bytes = [UInt8](uninitializedCount: count) { buffer, initializedCount in
            do throws(LogFormatError) {
                initializedCount = try SystemCalls.pread(
                    descriptor, UnsafeMutableRawBufferPointer(buffer), at: offset, path: path)
            } catch {
                failure = error
                initializedCount = 0
            }
        }
        if let failure { throw failure }
        return bytes
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(LogFormatError) {
        switch faults?.check(.write) {
        case .fail(let code):
            throw SystemCalls.failure("write (injected)", path: path, code: code, offset: offset)
        case .tear(let code):
            try SystemCalls.pwrite(
                descriptor, UnsafeRawBufferPointer(rebasing: bytes.prefix(bytes.count / 2)),
                at: offset, path: path)
            throw SystemCalls.failure(
                "write (injected tear)", path: path, code: code,
                offset: offset + UInt64(bytes.count / 2))
        case .flipBit where !bytes.isEmpty:
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 8)
            defer { copy.deallocate() }
            copy.copyMemory(from: bytes)
            copy[bytes.count / 2] ^= 0x10
            try SystemCalls.pwrite(descriptor, UnsafeRawBufferPointer(copy), at: offset, path: path)
        case nil, .flipBit:
            try SystemCalls.pwrite(descriptor, bytes, at: offset, path: path)
        }
    }

    func write(_ bytes: [UInt8], at offset: UInt64) throws(LogFormatError) {
        // The array's own bytes are written (no copy: a rewrite writes 4 MiB at a time); the typed error is carried
        // out of withUnsafeBytes as a Result.
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(LogFormatError) in try write(raw, at: offset) }
        }
        try result.get()
    }

    /// Starts writing `count` bytes at `offset` to the disk without waiting (a hint; see
    /// ``SystemCalls/startWriteback(_:at:count:)``): a later ``sync()`` still makes them durable, and waits less.
    func startWriteback(at offset: UInt64, count: Int) {
        faults?.recordWriteback(offset..<offset + UInt64(count))
        SystemCalls.startWriteback(descriptor, at: offset, count: count)
    }

    func sync() throws(LogFormatError) {
        if case .fail(let code)? = faults?.check(.sync) {
            throw SystemCalls.failure("fdatasync (injected)", path: path, code: code)
        }
        try SystemCalls.dataSync(descriptor, path: path)
    }

    func truncate(to length: UInt64) throws(LogFormatError) {
        if case .fail(let code)? = faults?.check(.truncate) {
            throw SystemCalls.failure("truncate (injected)", path: path, code: code)
        }
        try SystemCalls.truncate(descriptor, to: length, path: path)
    }
}

extension FaultInjector? {
    /// Puts a new file in place at `to` unless something is already there (a hard link, then the temporary name is
    /// removed); returns false when `to` exists. Counts as a `.rename` for fault injection.
    func publish(_ from: String, at to: String) throws(LogFormatError) -> Bool {
        if case .fail(let code)? = self?.check(.rename) {
            throw SystemCalls.failure("rename (injected)", path: from, code: code)
        }
        defer { SystemCalls.unlink(from) }
        do {
            try SystemCalls.link(from, to: to)
            return true
        } catch let error where error.systemErrno == EEXIST {
            return false
        } catch let error where [EPERM, EOPNOTSUPP, ENOSYS].contains(error.systemErrno ?? 0) {
            // A file system without hard links: fall back to a rename, which cannot refuse to replace.
            guard !SystemCalls.exists(to) else { return false }
            try SystemCalls.rename(from, to: to)
            return true
        }
    }

    func rename(_ from: String, to: String) throws(LogFormatError) {
        if case .fail(let code)? = self?.check(.rename) {
            throw SystemCalls.failure("rename (injected)", path: from, code: code)
        }
        try SystemCalls.rename(from, to: to)
    }

    func syncDirectory(of path: String) throws(LogFormatError) {
        if case .fail(let code)? = self?.check(.directorySync) {
            throw SystemCalls.failure("directory fsync (injected)", path: path, code: code)
        }
        try SystemCalls.syncDirectory(of: path)
    }
}
