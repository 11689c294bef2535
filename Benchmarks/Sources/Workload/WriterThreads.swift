import Foundation
import Synchronization

/// Runs `count` writer threads (real threads: Swift's cooperative pool has one thread per core, which would
/// serialize blocking `fdatasync` calls and hide group commit). Each thread prepares with `setup(index)`
/// (not measured), then all start together; returns the seconds from the start until the last one finished.
func runWriterThreads(count: Int, setup: @escaping @Sendable (Int) throws -> (() throws -> Void)) throws -> Double {
    let ready = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    let failure = Mutex<String?>(nil)
    for index in 0..<count {
        done.enter()
        let thread = Thread {
            defer { done.leave() }
            do {
                let work = try setup(index)
                ready.signal()
                go.wait()
                try work()
            } catch {
                failure.withLock { $0 = "writer \(index): \(error)" }
                ready.signal()
            }
        }
        thread.start()
    }
    for _ in 0..<count { ready.wait() }
    let start = monotonicSeconds()
    for _ in 0..<count { go.signal() }
    done.wait()
    let seconds = monotonicSeconds() - start
    if let message = failure.withLock({ $0 }) { throw WorkloadError(message) }
    return seconds
}

/// A failure of the workload itself (not of an engine's API).
public struct WorkloadError: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
