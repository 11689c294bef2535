import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one writer of a log: thread-safe appends with group commit, recovery on open, and a seal on clean close.
///
/// Any number of threads may append at once. Each append encodes and compresses its frames outside the lock,
/// reserves its place in the file under the lock, and then either becomes the *leader* (writes every frame queued
/// so far with one `pwrite` and one `fdatasync`) or waits for the leader whose sync covers it. A failed write or
/// sync *poisons* the writer: the sync is never retried (after a failed `fdatasync` the kernel may have dropped the
/// dirty pages), every later call fails, and the log must be reopened, which recovers from the file.
public final class LogWriter: Sendable {
    /// How to open a log for writing.
    public struct Options: Sendable {
        /// When appends are acknowledged; `.full` by default.
        public var durability: Durability = .full
        /// Create the file when it does not exist.
        public var createIfMissing = true
        /// The store UUID of a new file (random when nil); ignored when the file exists.
        public var storeUUID: LogUUID?
        /// Transactions larger than this are split into first/middle/last fragments.
        package var fragmentByteCount = 1 << 20
        /// The largest transaction a new file accepts (1 byte … ``LogLimits/maxTransactionByteCount``), recorded in
        /// its header so that readers know the bound before they read; ignored when the file exists (its own
        /// recorded limit applies).
        package var maxTransactionByteCount = LogLimits.maxTransactionByteCount
        /// `.normal` durability: sync when this many milliseconds have passed since unsynced data appeared …
        public var normalSyncInterval = 50
        /// … or when this many bytes are unsynced.
        public var normalSyncByteCount = 1 << 20
        /// The permission bits of a newly created log, applied exactly (the process umask does not narrow them):
        /// owner read and write only by default, since a store holds an app's whole data and history. An existing
        /// log keeps its own mode, owner and group, also when it is rewritten.
        public var filePermissions: UInt32 = 0o600
        /// The most bytes of zeros the writer keeps written and synced ahead of the log's end (`full` and `normal`
        /// durability; 0 turns it off): appends then overwrite blocks the file already has, so their `fdatasync`
        /// does not also commit a new file size (`Docs/FileFormat.md` §4, "Preallocated space"). The space grows
        /// with the log (an eighth of it, at least 64 KiB, at most this) and is cut off when the writer closes.
        ///
        /// On (1 MiB) by default since h58, when scans of a log that a writer is appending to stopped taking the
        /// zeros' unfinished frames for damage: the rewrite's tail copy reads only what the writer had finished,
        /// and another process's read-only open or `egctl verify` re-reads a failed frame before calling it damage
        /// (`Docs/FileFormat.md` §4, "Scanning a live log"; it was off from `845f0f8` until then).
        package var preallocationByteCount = 1 << 20
        /// Fault injection for tests.
        package var faultInjector: FaultInjector?
        /// Whether the recovery scan leaves the bodies of checkpoint entity chunks for their first load (the
        /// store's open; `Docs/FileFormat-Checkpoints.md` §4). Off by default: a scan then verifies every frame.
        package var defersEntityChunkBodies = false

        /// Options with the given durability, creation and store UUID.
        public init(durability: Durability = .full, createIfMissing: Bool = true, storeUUID: LogUUID? = nil) {
            self.durability = durability
            self.createIfMissing = createIfMissing
            self.storeUUID = storeUUID
        }
    }

    struct State {
        /// The log; nil once the writer is closed (a leader still writing keeps its own reference).
        var fileBox: SharedLogFile?
        /// The lock on the log file; replaced when a rewrite puts a new file in place.
        var storeLock: StoreLock
        var header: LogFileHeader
        var seed: UInt32
        /// End of everything reserved (written or queued).
        var reservedEnd: UInt64
        /// End of what has been written to the file.
        var writtenEnd: UInt64
        /// End of what is known durable.
        var syncedEnd: UInt64
        /// End of the file's bytes as the writer left them: what was written, then the zeros it wrote ahead
        /// (preallocated space); never below `writtenEnd` while the file is intact. Only decides when to write
        /// zeros ahead again: no offset handed out depends on it.
        var allocatedEnd: UInt64
        var nextSequence: UInt64
        var lastTransactionID: UInt64
        /// Encoded frames not yet written, starting at `queuedStart`.
        var queued: [UInt8] = []
        var queuedStart: UInt64
        var leaderActive = false
        var syncScheduled = false
        var poison: LogFormatError?
        var isClosed = false
        /// How many times a leader synced appended frames (see ``LogWriter/syncCount``).
        var syncCount = 0
        /// Which file the offsets above are in: 0 for the file opened, one more for each rewrite adopted, so that
        /// an offset handed out in a replaced file is never compared with the new file's.
        var fileGeneration: UInt64 = 0
    }

    /// The log's path, as given.
    public let path: String
    /// The file `path` names, with symbolic links followed: what a rewrite replaces and where temporary files go.
    let resolvedPath: String
    let options: Options
    let state: ConditionLock<State>
    /// What opening the log found and repaired.
    public let recoveryReport: RecoveryReport

    /// Opens (or creates) the log at `path` for writing, recovering from a crash.
    ///
    /// - Throws: ``LogFormatError`` — `.locked` when another process writes the store (naming its pid),
    ///   `.damaged` when data that had already been synced fails its checks (with the byte offset and the
    ///   affected transactions; nothing is truncated), `.notALog`, `.unsupportedVersion`, `.io`.
    public convenience init(path: String, options: Options = Options()) throws(LogFormatError) {
        do {
            try self.init(path: path, options: options, replay: { _ in })
        } catch let error as LogFormatError {
            throw error
        } catch {
            preconditionFailure("a replay that throws nothing threw \(error)")
        }
    }

    /// Opens (or creates) the log at `path` for writing, recovering from a crash, and calls `replay` with every
    /// committed record in order (so the object layer replays during the one recovery scan).
    ///
    /// `replayEnded` is called once the scan delivered its last record, before recovery changes the file (a torn
    /// tail is cut off after it): a caller that holds records back to replay them later (decoded ahead on another
    /// thread) replays them there, so that a failure of theirs, like one of `replay`, leaves the file as it was.
    ///
    /// - Throws: as ``init(path:options:)``; errors thrown by `replay` or `replayEnded` are rethrown unchanged (and
    ///   the writer is not opened).
    package init(
        path: String, options: Options = Options(), replay: (LogRecord) throws -> Void,
        replayEnded: () throws -> Void = {}
    ) throws {
        let resolvedPath = try FilePath.resolvingSymbolicLinks(path)
        let (storeLock, created) = try Self.lock(resolvedPath, displayPath: path, options: options)
        let removed = AtomicRewrite.removeLeftovers(of: resolvedPath)
        let file = try LogFile(path: resolvedPath, flags: O_RDWR, faults: options.faultInjector)
        guard try file.status().identity == storeLock.identity else {
            throw LogFormatError(
                .io, "was replaced by another program while it was being opened; open it again", path: path)
        }
        let (header, headerCopyDamaged) = try LogReader.readHeader(file)
        let size = try file.size()
        var scanner = LogScanner(
            window: FileWindow(file: try LogFile(path: resolvedPath, flags: O_RDONLY, faults: nil), limit: size),
            header: header, defersEntityChunkBodies: options.defersEntityChunkBodies)
        let caller = CallerError()
        let result: ScanResult
        var converter = ScanRecordConverter(path: path, fromTransactionID: 0)
        do {
            result = try scanner.scan { event throws(LogFormatError) in
                if let record = try converter.record(for: event) {
                    try caller.run { try replay(record) }
                }
            }
            try converter.finish()
            try caller.run { try replayEnded() }
        } catch {
            try caller.rethrow(error)
        }
        var truncated: TornTail?
        var trimmedPreallocation: UInt64 = 0
        switch result.tail {
        case .clean:
            break
        case .torn(let offset, let count, _) where try file.isZeroFilled(from: offset, to: size):
            // Zeros after the last committed unit: space a writer preallocated (and perhaps a batch whose bytes never
            // reached the disk, which is no different). Not a torn write: cut off without a report.
            try file.truncate(to: offset)
            try file.sync()
            trimmedPreallocation = count
        case .damaged(let damage):
            throw LogFormatError(
                .damaged,
                "\(damage.summary). Data that had been synced is damaged, so nothing was truncated; open the store "
                    + "read-only to read up to the damage, or salvage it into a new file (egctl salvage)",
                path: path, byteOffset: damage.byteOffset, damage: damage)
        case .torn(let offset, let count, let reason):
            // Never-synced bytes from a crash: name what they held, then cut them off before anything is appended.
            let lost = try scanner.transactionIDs(inTailFrom: offset, after: result.lastTransactionID)
            try file.truncate(to: offset)
            try file.sync()
            truncated = TornTail(byteOffset: offset, byteCount: count, reason: reason, transactionIDs: lost)
        }
        self.path = path
        self.resolvedPath = resolvedPath
        self.options = options
        self.recoveryReport = RecoveryReport(
            truncatedTail: truncated, headerCopyDamaged: headerCopyDamaged, removedLeftovers: removed,
            created: created, scan: ScanReport(result, fileByteCount: size, headerCopyDamaged: headerCopyDamaged),
            trimmedPreallocationByteCount: trimmedPreallocation)
        let end = result.committedEnd
        self.state = ConditionLock(
            State(
                fileBox: SharedLogFile(file), storeLock: storeLock, header: header, seed: header.checksumSeed,
                reservedEnd: end, writtenEnd: end, syncedEnd: end, allocatedEnd: end, nextSequence: result.nextSequence,
                lastTransactionID: result.lastTransactionID, queuedStart: end))
    }

    /// Locks the log at `path` (symlinks resolved), creating it first when it is missing and `options` allow.
    private static func lock(_ path: String, displayPath: String, options: Options) throws(LogFormatError)
        -> (StoreLock, created: Bool)
    {
        var created = false
        // Another process may create the log at the same moment (then ours is not published), or remove it.
        for _ in 0..<10 {
            if let lock = try StoreLock.lockingExistingFile(at: path, displayPath: displayPath) {
                return (lock, created)
            }
            guard options.createIfMissing else {
                throw LogFormatError(.io, "does not exist", path: displayPath, systemErrno: ENOENT)
            }
            guard (1...LogLimits.maxTransactionByteCount).contains(options.maxTransactionByteCount) else {
                throw LogFormatError(
                    .invalidArgument,
                    "a transaction limit of \(options.maxTransactionByteCount) bytes is outside 1..."
                        + "\(LogLimits.maxTransactionByteCount)", path: displayPath)
            }
            created = try create(
                path: path, storeUUID: options.storeUUID ?? .random(),
                maxTransactionByteCount: options.maxTransactionByteCount, permissions: options.filePermissions,
                faults: options.faultInjector)
        }
        throw LogFormatError(.io, "kept disappearing while it was being created", path: displayPath)
    }

    /// Creates a new, empty log atomically: header written to a temporary file, synced, and linked into place
    /// unless a file appeared there meanwhile (returns false then: another opener created it first).
    static func create(
        path: String, storeUUID: LogUUID, maxTransactionByteCount: Int = LogLimits.maxTransactionByteCount,
        permissions: UInt32, faults: FaultInjector?
    ) throws(LogFormatError) -> Bool {
        let temporary = AtomicRewrite.temporaryPath(for: path, purpose: "create")
        do {
            let file = try LogFile(
                path: temporary, flags: O_RDWR | O_CREAT | O_EXCL, permissions: permissions, faults: faults)
            let header = LogFileHeader(storeUUID: storeUUID, maxTransactionByteCount: maxTransactionByteCount)
            try file.write(header.encodedRegion(), at: 0)
            try file.sync()
            guard try faults.publish(temporary, at: path) else { return false }
            try faults.syncDirectory(of: path)
            return true
        } catch {
            SystemCalls.unlink(temporary)
            throw error
        }
    }

    /// The current file header (it changes when the log is rewritten).
    package var header: LogFileHeader { state.withLock { $0.value.header } }

    /// The last committed (or queued) transaction ID.
    public var lastTransactionID: UInt64 { state.withLock { $0.value.lastTransactionID } }

    /// Bytes in the log, including queued frames.
    public var byteCount: UInt64 { state.withLock { $0.value.reservedEnd } }

    /// How many times this writer has synced appended transactions (`fdatasync`) since it was opened: with
    /// concurrent appenders under group commit, fewer than the appends it acknowledged.
    public var syncCount: Int { state.withLock { $0.value.syncCount } }
}
