#if canImport(Glibc)
    import Glibc
#endif

/// egctl's settings of the C allocator, set once at start (a tool's choice for its own short-lived process; the
/// library leaves its host's allocator alone).
enum AllocatorTuning {
    /// Blocks below this size come from the allocator's heaps, which keep freed memory for the next allocation.
    static let mmapThresholdByteCount: Int32 = 32 << 20
    /// Freed memory at the top of a heap is returned to the kernel only past this much.
    static let trimThresholdByteCount: Int32 = 1 << 30

    /// glibc's `mallopt` parameters (`<malloc.h>`, which the Glibc module does not import).
    private static let trimThresholdParameter: Int32 = -1
    private static let mmapThresholdParameter: Int32 = -3

    /// Keeps freed memory in the process for reuse. A replay allocates and frees its transient buffers (fragments
    /// read again, decompressed payloads, decoded changesets: 1–8 MiB each) once per transaction; with glibc's
    /// adaptive defaults, which of them were unmapped or trimmed and then faulted in afresh depended on the order
    /// of frees, and `egctl replay --summary` of the 1M-post demo store took 224k–358k page faults from run to run
    /// (0.47–0.75 s of system time) against 203k–207k (0.42–0.48 s) with these settings — the state's own pages
    /// (BENCHMARKS.md, h74). Peak memory rises by ≈ 35 MB (freed buffers kept).
    static func apply() {
        _ = setParameter(mmapThresholdParameter, mmapThresholdByteCount)
        _ = setParameter(trimThresholdParameter, trimThresholdByteCount)
    }

    /// Sets one of glibc's `mallopt` parameters and returns whether it took; `false` where there is no `mallopt`.
    ///
    /// Looked up at run time (`dlsym`) rather than declared: `<malloc.h>` is not in the Glibc module, and a C library
    /// without `mallopt` (musl's static SDK) simply keeps its defaults. A failure leaves glibc's defaults, which are
    /// correct, only slower.
    static func setParameter(_ parameter: Int32, _ value: Int32) -> Bool {
        #if os(Linux)
            guard let symbol = dlsym(nil, "mallopt") else { return false }
            let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
            return mallopt(parameter, value) == 1
        #else
            return false
        #endif
    }
}
