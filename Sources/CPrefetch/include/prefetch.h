#ifndef EVENTGRAPH_PREFETCH_H
#define EVENTGRAPH_PREFETCH_H

#ifdef __cplusplus
extern "C" {
#endif

/// Asks the CPU to start loading the cache line at `address` for a read soon after, without waiting for it: a
/// lookup by ID issues the loads of its independent steps (the context's registry place, the key directory's
/// place) before it uses either, so that their cache misses overlap instead of following each other. A hint only:
/// it never faults, whatever the address.
static inline void eg_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }

#ifdef __cplusplus
}
#endif

#endif
