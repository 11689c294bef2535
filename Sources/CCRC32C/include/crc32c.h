#ifndef EVENTGRAPH_CRC32C_H
#define EVENTGRAPH_CRC32C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Extends a CRC32C (Castagnoli, reflected polynomial 0x82F63B78) over `length` bytes.
///
/// `crc` is a previous result (0 to start). The value is the standard CRC32C: the conventional
/// pre- and post-inversion is applied inside, so `eg_crc32c_extend(eg_crc32c_extend(0, a), b)` equals
/// the CRC of `a` followed by `b`. Uses the SSE4.2 `crc32` instruction when the CPU has it.
uint32_t eg_crc32c_extend(uint32_t crc, const void *bytes, size_t length);

/// The same function computed with the portable table; exposed so tests can compare both paths.
uint32_t eg_crc32c_extend_portable(uint32_t crc, const void *bytes, size_t length);

/// 1 when the hardware path is in use on this CPU, 0 otherwise.
int eg_crc32c_is_hardware_accelerated(void);

#ifdef __cplusplus
}
#endif

#endif
