#if canImport(Glibc)
    import Glibc
#endif

/// Whether this build runs under AddressSanitizer (`swift test --sanitize=address`, which builds `egctl` the same way).
///
/// ASan replaces glibc's allocator: `mallinfo2` no longer describes a heap, so egctl's heap prefaulter does not start
/// (as on any C library without it) and there are no glibc malloc arenas to count. What depends on glibc's allocator
/// is checked only without ASan; everything else (the replay's results) is checked under it too.
enum AddressSanitizer {
    static let isRunning: Bool = {
        #if os(Linux)
            // The runtime's entry point is in the process only when ASan's runtime was linked in.
            return dlsym(nil, "__asan_init") != nil
        #else
            return false
        #endif
    }()
}
