import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Monotonic seconds.
public func monotonicSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Runs `body` and returns the seconds it took.
public func measureSeconds(_ body: () throws -> Void) rethrows -> Double {
    let start = monotonicSeconds()
    try body()
    return monotonicSeconds() - start
}

/// Keeps memory the process frees in its heap (up to 64 MiB at its top) and serves blocks of up to 32 MiB from the
/// heap, instead of glibc's starting policy (128 KiB for both, raised only after a large mmapped block is freed);
/// returns whether both settings took. Elsewhere, does nothing and returns false.
///
/// The read scenarios call it so that every mode measures them with the same allocator policy. With the starting
/// policy (`--reads`: nothing large freed before), each GRDB fetch-all freed its 100,000 records at its end, glibc
/// trimmed the heap's top back to the kernel, and the next run faulted it in again: ≈ 4,800 page faults (≈ 19 MB of
/// fresh zeroed pages) inside every measured GRDB run, none in EventGraph's (it holds no records' strings at once).
/// A full run reaches these values by itself (its write scenarios free large blocks first) and measured GRDB's
/// fetch-all with no page fault: `--reads` charged GRDB ≈ 22 % more time than the full run did (h85).
@discardableResult
public func keepFreedHeapMemory() -> Bool {
    #if canImport(Glibc)
        // `mallopt` is in <malloc.h>, which the Glibc module leaves out; looked up instead of declared.
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(nil, "mallopt") else { return false }
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD
        let trimThreshold: Int32 = -1  // M_TRIM_THRESHOLD
        return mallopt(mmapThreshold, 32 << 20) == 1 && mallopt(trimThreshold, 64 << 20) == 1
    #else
        return false
    #endif
}

/// The process's peak resident set size in bytes (`VmHWM` in `/proc/self/status`; `getrusage` elsewhere).
public func peakResidentBytes() -> Int {
    if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) {
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let digits = line.dropFirst(6).filter(\.isNumber)
            if let kilobytes = Int(digits) { return kilobytes * 1024 }
        }
    }
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Int(usage.ru_maxrss) * 1024
}

/// Asks the kernel to drop the files' pages from the page cache (`posix_fadvise(DONTNEED)`), so the next open
/// reads from the disk. Returns whether every call succeeded. Dirty pages are written first (`fsync`).
@discardableResult
public func dropFromPageCache(_ files: [String]) -> Bool {
    var succeeded = true
    for file in files {
        let descriptor = open(file, O_RDONLY)
        guard descriptor >= 0 else {
            succeeded = false
            continue
        }
        if fsync(descriptor) != 0 { succeeded = false }
        if posix_fadvise(descriptor, 0, 0, Int32(POSIX_FADV_DONTNEED)) != 0 { succeeded = false }
        close(descriptor)
    }
    return succeeded
}

/// How many of the files' pages are in the page cache, and how many pages they have (via `mincore`).
public func cachedPageCounts(_ files: [String]) -> (cached: Int, total: Int) {
    var cached = 0
    var total = 0
    let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    for file in files {
        let descriptor = open(file, O_RDONLY)
        guard descriptor >= 0 else { continue }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_size > 0 else { continue }
        let length = Int(info.st_size)
        guard let address = mmap(nil, length, PROT_READ, MAP_SHARED, descriptor, 0), address != MAP_FAILED else {
            continue
        }
        defer { munmap(address, length) }
        let pages = (length + pageSize - 1) / pageSize
        var vector = [UInt8](repeating: 0, count: pages)
        guard mincore(address, length, &vector) == 0 else { continue }
        total += pages
        cached += vector.reduce(0) { $0 + Int($1 & 1) }
    }
    return (cached, total)
}
