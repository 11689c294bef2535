import LogFormat

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writing to stdout/stderr, and progress that shows only on a terminal.
enum Terminal {
    static var stderrIsTerminal: Bool { isatty(2) != 0 }

    /// Writes a line to standard error.
    static func warn(_ line: String) { writeToStandardError(line + "\n") }

    /// Writes text to file descriptor 2 (unbuffered, so it interleaves correctly with progress lines).
    static func writeToStandardError(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { return }
            offset += n
        }
    }
}

/// A progress line on standard error (`replay  45%  120.3 MB/s`), drawn at most ten times a second, and only when
/// standard error is a terminal, so pipes and logs stay clean.
///
/// Sendable, so that a library callback (a migration's progress) can draw it.
final class Progress: Sendable {
    private let label: String
    private let totalByteCount: UInt64
    private let enabled: Bool
    private let start: UInt64
    /// When the line was last drawn (0: never).
    private let lastDraw = LockedValue<UInt64>(0)

    init(_ label: String, totalByteCount: UInt64) {
        self.label = label
        self.totalByteCount = max(totalByteCount, 1)
        self.enabled = Terminal.stderrIsTerminal
        self.start = Progress.now()
    }

    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Reports that `byteOffset` bytes of the input have been processed.
    func update(byteOffset: UInt64) {
        guard enabled else { return }
        let now = Progress.now()
        let due = lastDraw.withLock { last in
            guard now - last > 100_000_000 else { return false }
            last = now
            return true
        }
        guard due else { return }
        let fraction = Double(min(byteOffset, totalByteCount)) / Double(totalByteCount)
        let elapsed = Double(now - start) / 1e9
        let rate = elapsed > 0 ? Double(byteOffset) / elapsed / 1e6 : 0
        let text = "\r\(label) \(Int(fraction * 100))%  \(Formatting.decimal(rate, digits: 1)) MB/s   "
        Terminal.writeToStandardError(text)
    }

    /// Clears the progress line.
    func finish() {
        guard enabled, lastDraw.withLock({ $0 }) != 0 else { return }
        Terminal.writeToStandardError("\r\u{1B}[2K")
    }
}
