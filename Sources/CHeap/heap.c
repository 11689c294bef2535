// `RUSAGE_THREAD` is a GNU extension, declared only with `_GNU_SOURCE` (hence a function here, not in the header).
#if defined(__linux__)
#define _GNU_SOURCE
#include <sys/resource.h>
#endif

#include "heap.h"

int eg_thread_usage(long *faults, long *cpuMicroseconds) {
#if defined(__linux__)
    struct rusage usage;
    if (getrusage(RUSAGE_THREAD, &usage) != 0) return 0;
    *faults = usage.ru_minflt;
    *cpuMicroseconds = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000L + usage.ru_utime.tv_usec
        + usage.ru_stime.tv_usec;
    return 1;
#else
    (void)faults;
    (void)cpuMicroseconds;
    return 0;
#endif
}
