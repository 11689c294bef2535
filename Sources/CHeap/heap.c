// `RUSAGE_THREAD` is a GNU extension, declared only with `_GNU_SOURCE` (hence a function here, not in the header).
#if defined(__linux__)
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int eg_heap_arena_count(void) {
#if defined(__GLIBC__)
    char *report = NULL;
    size_t length = 0;
    FILE *stream = open_memstream(&report, &length);
    if (stream == NULL) return -1;
    int written = malloc_info(0, stream);
    fclose(stream);
    if (written != 0 || report == NULL) {
        free(report);
        return -1;
    }
    int count = 0;
    for (const char *at = report; (at = strstr(at, "<heap nr=")) != NULL; at += 1) count += 1;
    free(report);
    return count;
#else
    return -1;
#endif
}
