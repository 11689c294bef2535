import CHeap
import Foundation

/// What a replay reports on standard error when the environment variable `EGCTL_REPORT_REPLAY` is `1`: the page
/// faults and CPU time of the replaying thread and how far the decoding ran ahead (for tests, which count them, and
/// for measurements; nothing is reported otherwise).
enum ReplayDiagnostics {
    static let isEnabled = ProcessInfo.processInfo.environment["EGCTL_REPORT_REPLAY"] == "1"

    /// The page faults the calling thread has taken (that needed no I/O) and its CPU time; `nil` when not enabled or
    /// not known.
    static var threadUsage: (faults: Int, cpuMicroseconds: Int)? {
        guard isEnabled else { return nil }
        var faults = 0
        var cpuMicroseconds = 0
        guard eg_thread_usage(&faults, &cpuMicroseconds) == 1 else { return nil }
        return (faults, cpuMicroseconds)
    }

    /// Writes `line` to standard error when enabled.
    /// The number of the C allocator's arenas (see `eg_heap_arena_count`); nil when not reporting or not known.
    static var arenaCount: Int? {
        guard isEnabled else { return nil }
        let count = Int(eg_heap_arena_count())
        return count >= 0 ? count : nil
    }

    static func report(_ line: @autoclosure () -> String) {
        if isEnabled { Terminal.warn("egctl: " + line()) }
    }
}
