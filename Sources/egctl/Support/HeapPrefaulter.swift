import CHeap
import EventGraph
import Foundation
import LogFormat

#if canImport(Glibc)
    import Glibc
#endif

/// Faults in, from egctl's decoding thread, the part of the C heap the replaying thread is about to fill.
///
/// A replay's state is built on the replaying thread from the main heap's top (columns, arenas, inverse lists),
/// and each of its ≈ 200k fresh pages (≈ 830 MB for the 1M-post demo store) was faulted in by that thread's first
/// write: ≈ 27–31 % of its samples (BENCHMARKS.md, h79, h84). The decoding thread, which has time to spare once it
/// decodes ahead of the replay, fills the page tables of the heap's top chunk, a bounded lead ahead of the heap's
/// use, before the replaying thread writes there (`madvise(MADV_POPULATE_WRITE)`, which faults pages in without
/// writing a byte, so it races with nothing). The heap grows with a large top pad, so that its top chunk lies ahead
/// of the writes. Transparent huge pages were tried for the heap instead (glibc's `glibc.malloc.hugetlb=1`): the
/// faults fell to 16k, but zeroing 2 MiB pages took 1.5 s more system time on this machine's kernel (BENCHMARKS.md,
/// h84).
///
/// egctl's own choice for its own process, like ``AllocatorTuning`` (the library leaves its host's memory alone).
/// Peak memory rises by at most the largest lead (pages populated past what the state ends up using).
final class HeapPrefaulter: Sendable {
    /// The smallest store whose replay is prefaulted: 64 MiB, or the byte count in the environment variable
    /// `EGCTL_PREFAULT_STORE_BYTES` (for tests: 0 prefaults every replay).
    static let smallestStoreByteCount: UInt64 =
        ProcessInfo.processInfo.environment["EGCTL_PREFAULT_STORE_BYTES"].flatMap { UInt64($0) } ?? 64 << 20
    /// How far the heap grows past a request (glibc's `M_TOP_PAD`): address space only, until written or populated.
    static let topPadByteCount: Int32 = 128 << 20
    /// The least and the most of the top chunk populated ahead of the heap's use.
    static let leadByteCountBounds: ClosedRange<Int> = (8 << 20)...(32 << 20)
    /// How far ahead of the heap's use each decoding first makes sure the heap is populated (≈ 2–3 ms of the
    /// decoding thread's time when none of it is yet).
    static let headStartByteCount = 8 << 20
    /// What one `madvise` call populates at most (≈ 0.3 ms of the decoding thread's time).
    static let sliceByteCount: UInt = 1 << 20

    /// glibc's `mallopt` parameter and Linux's `madvise` advice (`<malloc.h>` and Linux 5.14's `<sys/mman.h>`,
    /// which the Glibc module does not declare).
    private static let topPadParameter: Int32 = -2
    /// glibc's `M_ARENA_MAX`, set to 1 for a prefaulted replay: the decoding thread allocates from the main heap
    /// too, so that the decoded payloads and changesets, freed once applied, are reused by the state (pages already
    /// faulted in) and their own next ones come from the top the decoding thread populates. In an arena of its own,
    /// each heap that emptied was unmapped and the next faulted in again: with one arena, the replaying thread of
    /// the 1M-post demo store took 35k–46k page faults instead of 60k–81k, its CPU −3 to −6 %, peak RSS −70 MB
    /// (BENCHMARKS.md, h96). Its two threads allocate little else, so they hardly wait for each other's lock.
    private static let arenaMaxParameter: Int32 = -8
    private static let populateWriteAdvice: Int32 = 23
    private static let pageByteCount = 4096

    /// What was populated: `end` is the end of it so far (an address), `nil` once populating failed (it is not tried
    /// again, and `failure` is `madvise`'s error); `byteCount` is its size, for ``report()``.
    private struct Populated {
        var end: UInt? = 0
        var byteCount = 0
        var failure: Int32?
    }
    private let populated = LockedValue(Populated())

    private init() {}

    /// A prefaulter for the replay of a store of `storeByteCount` bytes, with the heap's top pad set; `nil` for a
    /// small store or a C library without `mallinfo2` (before glibc 2.33, or musl's static SDK): the replay then
    /// faults its own pages.
    static func start(forStoreOf storeByteCount: UInt64) -> HeapPrefaulter? {
        #if os(Linux)
            var start: UInt = 0
            var end: UInt = 0
            guard storeByteCount >= smallestStoreByteCount, eg_heap_top_chunk(&start, &end) == 1,
                AllocatorTuning.setParameter(topPadParameter, topPadByteCount)
            else { return nil }
            // Set before the decoding thread first allocates (a thread keeps the arena it first got).
            _ = AllocatorTuning.setParameter(arenaMaxParameter, 1)
            return HeapPrefaulter()
        #else
            return nil
        #endif
    }

    /// Populates the heap's top chunk from its start up to `leadByteCount` past it (clamped to
    /// ``leadByteCountBounds``), skipping what an earlier call populated, a slice at a time for as long as
    /// `continues` says so (the decoding thread stops when its next transaction is waiting). Returns the bytes
    /// populated.
    @discardableResult
    func populate(leadByteCount: Int, while continues: () -> Bool) -> Int {
        #if os(Linux)
            let lead = UInt(leadByteCount.clamped(to: Self.leadByteCountBounds))
            let pageMask = UInt(Self.pageByteCount - 1)
            return populated.withLock { populated in
                var byteCount = 0
                // The top is read again for each slice: the replaying thread allocates from it meanwhile.
                while continues(), let done = populated.end, let top = topChunk() {
                    let start = (max(done, top.lowerBound) + pageMask) & ~pageMask
                    let end = min(top.upperBound, top.lowerBound &+ lead, start &+ Self.sliceByteCount) & ~pageMask
                    guard start < end else { break }
                    guard let address = UnsafeMutableRawPointer(bitPattern: start),
                        madvise(address, Int(end - start), Self.populateWriteAdvice) == 0
                    else {
                        // A kernel before 5.14 (EINVAL) or memory that ran out: the replaying thread faults its own.
                        populated.failure = errno
                        populated.end = nil
                        break
                    }
                    populated.end = end
                    byteCount += Int(end - start)
                }
                populated.byteCount += byteCount
                return byteCount
            }
        #else
            return 0
        #endif
    }

    /// Reports (``ReplayDiagnostics``) the bytes populated so far and whether populating failed: what a test can
    /// check whatever the machine's load, unlike who took the faults, which depends on how far ahead the decoding
    /// thread got.
    func report() {
        let (byteCount, failure) = populated.withLock { ($0.byteCount, $0.failure) }
        ReplayDiagnostics.report(
            "the prefaulter populated \(byteCount) bytes"
                + (failure.map { "; populating failed with errno \($0) and stopped" } ?? ""))
    }

    /// The addresses of the main heap's top chunk (see `eg_heap_top_chunk`).
    private func topChunk() -> Range<UInt>? {
        var start: UInt = 0
        var end: UInt = 0
        guard eg_heap_top_chunk(&start, &end) == 1, start <= end else { return nil }
        return start..<end
    }
}

extension Comparable {
    fileprivate func clamped(to bounds: ClosedRange<Self>) -> Self {
        min(max(self, bounds.lowerBound), bounds.upperBound)
    }
}

extension HeapPrefaulter: DecodingCompanion {
    /// A head start before each decoding on the decoding thread.
    func willDecode() {
        populate(leadByteCount: Self.headStartByteCount) { true }
    }

    /// After a decoding, as far as the transaction's size suggests, for as long as no other transaction waits to be
    /// decoded (the decoding thread's idle time): the state a transaction adds is of the order of its payload (its
    /// strings are most of both).
    func didDecode(payloadByteCount: Int, isIdle: () -> Bool) {
        populate(leadByteCount: min(payloadByteCount, Int.max / 2) * 2, while: isIdle)
    }
}
