import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Makes a sequence of things on every core and hands them to one consumer in their order, the consumer running on
/// the calling thread beside the workers: how a rewrite encodes, compresses and checksums its checkpoint chunks
/// while it writes them in the file's order.
///
/// A worker takes the next index as soon as it is done with one, so no core waits for the others at a batch's end
/// (an earlier version made the chunks 32 at a time: each batch ended with one core idle while the last chunk of
/// the batch was made), and never more than ``window`` indexes past the first one not yet consumed, so at most that
/// many made things are held (a batch pipeline held two batches: 64 compressed chunk bodies of up to a few MB each,
/// which made the allocator take fresh pages from the kernel batch after batch). A worker that finds the window
/// full ends instead of waiting (no Dispatch thread sleeps on the consumer); the consumer starts one again when it
/// takes a made thing.
package enum OrderedPipeline {
    /// How far ahead of the consumer the workers make: a few things per core, so that each worker finds the next
    /// index free while the consumer catches up.
    package static var window: Int { 4 * workerCount }

    /// The cores the workers run on (Dispatch's width: the online processors).
    package static let workerCount: Int = {
        #if canImport(Glibc) || canImport(Darwin)
            return max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        #else
            return 1
        #endif
    }()

    /// Makes `count` things (`make(i)` on any thread, at most ``window`` indexes past the first one not yet
    /// consumed) and hands each to `consume` on the calling thread, in index order.
    ///
    /// The first failure in index order is thrown, of a making or of a consuming; what comes after it is not
    /// consumed. Once `stopReason` gives an error (a cancellation), no further index is made (those being made are
    /// finished) and that error is thrown before the next consuming. When this returns or throws, no `make` is
    /// running or will run.
    package static func run<Made: Sendable>(
        count: Int, window: Int = OrderedPipeline.window, workerCount: Int = OrderedPipeline.workerCount,
        stopReason: @escaping @Sendable () -> LogFormatError? = { nil },
        make: @escaping @Sendable (_ index: Int) throws(LogFormatError) -> Made,
        consume: (_ index: Int, _ made: Made) throws(LogFormatError) -> Void
    ) throws(LogFormatError) {
        precondition(window >= 1 && workerCount >= 1, "a pipeline needs a window and a worker")
        guard count > 0 else { return }
        let shared = Shared(count: count, window: window, workerCount: workerCount, stopReason: stopReason, make: make)
        defer { shared.stopAndWaitForWorkers() }
        shared.startWorkers()
        for index in 0..<count {
            if let error = stopReason() { throw error }
            guard let made = shared.take(index) else {
                throw stopReason() ?? LogFormatError(.closed, "the pipeline stopped before item \(index) was made")
            }
            try consume(index, try made.get())
        }
    }

    /// The state the workers and the consumer share, under one lock.
    private final class Shared<Made: Sendable>: Sendable {
        struct State {
            /// The next index a worker takes.
            var next = 0
            /// How many things the consumer has taken (the first index not yet consumed).
            var consumed = 0
            /// Made things by index modulo the window (an index is taken only once the one a window before it was
            /// consumed, so its slot is free).
            var slots: [Result<Made, LogFormatError>?]
            /// Workers started and not yet ended.
            var running = 0
            /// Raised when the consumer stops: no index is taken after it.
            var isStopped = false
        }

        let count: Int
        let window: Int
        let workerCount: Int
        let stopReason: @Sendable () -> LogFormatError?
        let make: @Sendable (Int) throws(LogFormatError) -> Made
        let state: ConditionLock<State>

        init(
            count: Int, window: Int, workerCount: Int, stopReason: @escaping @Sendable () -> LogFormatError?,
            make: @escaping @Sendable (Int) throws(LogFormatError) -> Made
        ) {
            (self.count, self.window, self.workerCount) = (count, window, workerCount)
            (self.stopReason, self.make) = (stopReason, make)
            state = ConditionLock(State(slots: Array(repeating: nil, count: window)))
        }

        /// Starts as many workers as may take an index now (none past the window, none after a stop).
        func startWorkers() {
            let starting = state.withLock { locked -> Int in
                let s = locked.value
                guard !s.isStopped else { return 0 }
                let free = min(count, s.consumed + window) - s.next
                let starting = max(0, min(workerCount - s.running, free))
                locked.value.running += starting
                return starting
            }
            for _ in 0..<starting {
                DispatchQueue.global().async { self.work() }
            }
        }

        /// A worker: takes the next index while one is free in the window, makes it and files it; ends when none is.
        private func work() {
            while true {
                let index = state.withLock { locked -> Int? in
                    let s = locked.value
                    guard !s.isStopped, s.next < count, s.next < s.consumed + window, stopReason() == nil else {
                        locked.value.running -= 1
                        return nil
                    }
                    locked.value.next += 1
                    return s.next
                }
                guard let index else {
                    state.broadcast()
                    return
                }
                let made = Result { () throws(LogFormatError) in try make(index) }
                state.withLock { $0.value.slots[index % window] = made }
                state.broadcast()
            }
        }

        /// Waits for thing `index` (the next to consume) and takes it; `nil` when it will not be made (the workers
        /// stopped before one took it).
        func take(_ index: Int) -> Result<Made, LogFormatError>? {
            let made = state.withLock { locked -> Result<Made, LogFormatError>? in
                locked.wait { $0.slots[index % window] != nil || ($0.next <= index && $0.running == 0) }
                guard let made = locked.value.slots[index % window] else { return nil }
                locked.value.slots[index % window] = nil
                locked.value.consumed = index + 1
                return made
            }
            // A slot is free again: a worker that ended on a full window is started again (not after a failure,
            // which ends the run).
            if case .success? = made { startWorkers() }
            return made
        }

        /// Lets no worker take another index and waits for those running to end.
        func stopAndWaitForWorkers() {
            state.withLock { locked in
                locked.value.isStopped = true
                locked.wait { $0.running == 0 }
            }
        }
    }
}
