#ifndef EVENTGRAPH_HEAP_H
#define EVENTGRAPH_HEAP_H

#include <stdint.h>

#if defined(__GLIBC__)
#include <malloc.h>
#include <unistd.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// Sets `*start` and `*end` to the addresses of the main heap's top chunk (the free space at its end, from which a
/// heap that has no free block large enough allocates) and returns 1; returns 0 without a glibc that has
/// `mallinfo2` (2.33 and later), whose `keepcost` is that chunk's size and whose heap ends at the break.
/// `struct mallinfo2` is returned by value, which Swift cannot call through a function pointer: hence this shim.
///
/// The sizes are read before the break: another thread may grow the heap between the two reads (the break only
/// grows while egctl replays: it never trims below 1 GiB), and a break read first with a top chunk read after it had
/// grown by the heap's 128 MiB pad gave a start below the heap's own start, outside any mapping (`madvise` failed
/// with ENOMEM, seen once in a full test run). Read in this order, the start is at most the size of the heap below
/// the break, so within the heap, and at worst below the top chunk's start, where populating is harmless.
static inline int eg_heap_top_chunk(uintptr_t *start, uintptr_t *end) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    void *brk = sbrk(0);
    if (brk == (void *)-1) return 0;
    uintptr_t top = (uintptr_t)brk;
    if (info.keepcost > top) return 0;
    *start = top - info.keepcost;
    *end = top;
    return 1;
#else
    (void)start;
    (void)end;
    return 0;
#endif
}

/// Sets `*faults` to the page faults the calling thread has taken that needed no I/O and `*cpuMicroseconds` to its
/// CPU time (`getrusage(RUSAGE_THREAD)`) and returns 1; returns 0 where that is not known.
int eg_thread_usage(long *faults, long *cpuMicroseconds);

/// The number of glibc malloc arenas the process has (the main one and one per thread that got its own: the
/// `<heap nr=…>` entries of `malloc_info`); -1 where that is not known.
int eg_heap_arena_count(void);

#ifdef __cplusplus
}
#endif

#endif
