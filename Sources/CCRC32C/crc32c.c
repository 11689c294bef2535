// CRC32C (Castagnoli). Hardware path: SSE4.2 `crc32` instruction, 8 bytes at a time (three interleaved streams
// on buffers of 768 bytes and more), chosen at run time with __builtin_cpu_supports so the binary still runs on
// CPUs without SSE4.2. Portable path: slicing-by-8 tables built once. Both produce identical results (tested).
#include "crc32c.h"

#include <string.h>

#if defined(__x86_64__)
#include <pthread.h>
#endif

static uint32_t table[8][256];
static int table_ready = 0;

static void build_table(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : (c >> 1);
        table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = table[0][n];
        for (int k = 1; k < 8; k++) {
            c = table[0][c & 0xff] ^ (c >> 8);
            table[k][n] = c;
        }
    }
    __atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

uint32_t eg_crc32c_extend_portable(uint32_t crc, const void *bytes, size_t length) {
    if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE)) build_table();  // idempotent; races write equal values
    const unsigned char *p = (const unsigned char *)bytes;
    uint32_t c = ~crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        word = __builtin_bswap64(word);
#endif
        uint32_t lo = (uint32_t)word ^ c;
        uint32_t hi = (uint32_t)(word >> 32);
        c = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^
            table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^ table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
        p += 8;
        length -= 8;
    }
    while (length--) c = table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
    return ~c;
}

#if defined(__x86_64__)
// The `crc32` instruction takes 3 cycles but starts one a cycle: one chain of them runs at a third of the speed the
// unit allows. A long buffer is hashed as three interleaved streams over consecutive blocks (each from zero), joined
// by shifting the CRC so far over a block's worth of zero bytes (a linear map, applied by four table lookups) and
// adding the next block's CRC: the same value as one chain (Mark Adler's method for CRC32C).
enum { LONG_BLOCK = 8192, SHORT_BLOCK = 256 };
static uint32_t shift_long[4][256];
static uint32_t shift_short[4][256];
static pthread_once_t shift_tables_once = PTHREAD_ONCE_INIT;

// The product of a 32x32 matrix over GF(2) (columns in `matrix`) and a vector.
static uint32_t gf2_times(const uint32_t *matrix, uint32_t vector) {
    uint32_t sum = 0;
    for (; vector != 0; vector >>= 1, matrix++)
        if (vector & 1) sum ^= *matrix;
    return sum;
}

static void gf2_square(uint32_t *square, const uint32_t *matrix) {
    for (int n = 0; n < 32; n++) square[n] = gf2_times(matrix, matrix[n]);
}

// The tables that shift a (raw, uninverted) CRC register over `length` zero bytes, `length` a power of two: the
// operator for one zero bit, squared up to `8 * length` bits, then applied to each byte of the register.
static void build_shift_table(uint32_t table[4][256], size_t length) {
    uint32_t odd[32], even[32];
    odd[0] = 0x82F63B78u;
    for (int n = 1; n < 32; n++) odd[n] = 1u << (n - 1);
    gf2_square(even, odd);  // two zero bits
    gf2_square(odd, even);  // four zero bits
    const uint32_t *op = odd;
    for (size_t bits = 4; bits < 8 * length; bits *= 2) {
        if (op == odd) {
            gf2_square(even, odd);
            op = even;
        } else {
            gf2_square(odd, even);
            op = odd;
        }
    }
    for (uint32_t n = 0; n < 256; n++) {
        table[0][n] = gf2_times(op, n);
        table[1][n] = gf2_times(op, n << 8);
        table[2][n] = gf2_times(op, n << 16);
        table[3][n] = gf2_times(op, n << 24);
    }
}

static void build_shift_tables(void) {
    build_shift_table(shift_long, LONG_BLOCK);
    build_shift_table(shift_short, SHORT_BLOCK);
}

static inline uint32_t shift(uint32_t table[4][256], uint32_t crc) {
    return table[0][crc & 0xff] ^ table[1][(crc >> 8) & 0xff] ^ table[2][(crc >> 16) & 0xff] ^ table[3][crc >> 24];
}

// Three streams over blocks of `block` bytes each while at least three blocks remain.
__attribute__((target("sse4.2")))
static inline uint64_t crc32c_three_streams(
    uint64_t c0, const unsigned char **bytes, size_t *length, size_t block, uint32_t table[4][256]) {
    const unsigned char *p = *bytes;
    size_t remaining = *length;
    while (remaining >= 3 * block) {
        uint64_t c1 = 0, c2 = 0;
        const unsigned char *end = p + block;
        do {
            uint64_t w0, w1, w2;
            memcpy(&w0, p, 8);
            memcpy(&w1, p + block, 8);
            memcpy(&w2, p + 2 * block, 8);
            c0 = __builtin_ia32_crc32di(c0, w0);
            c1 = __builtin_ia32_crc32di(c1, w1);
            c2 = __builtin_ia32_crc32di(c2, w2);
            p += 8;
        } while (p < end);
        c0 = shift(table, (uint32_t)c0) ^ (uint32_t)c1;
        c0 = shift(table, (uint32_t)c0) ^ (uint32_t)c2;
        p += 2 * block;
        remaining -= 3 * block;
    }
    *bytes = p;
    *length = remaining;
    return c0;
}

__attribute__((target("sse4.2")))
static uint32_t crc32c_sse42(uint32_t crc, const void *bytes, size_t length) {
    const unsigned char *p = (const unsigned char *)bytes;
    uint64_t c = (uint32_t)~crc;
    if (length >= 3 * SHORT_BLOCK) {
        pthread_once(&shift_tables_once, build_shift_tables);
        c = crc32c_three_streams(c, &p, &length, LONG_BLOCK, shift_long);
        c = crc32c_three_streams(c, &p, &length, SHORT_BLOCK, shift_short);
    }
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        length -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (length--) c32 = __builtin_ia32_crc32qi(c32, *p++);
    return ~c32;
}

static int hardware = -1;

int eg_crc32c_is_hardware_accelerated(void) {
    int h = __atomic_load_n(&hardware, __ATOMIC_RELAXED);
    if (h < 0) {
        __builtin_cpu_init();
        h = __builtin_cpu_supports("sse4.2") ? 1 : 0;
        __atomic_store_n(&hardware, h, __ATOMIC_RELAXED);
    }
    return h;
}

uint32_t eg_crc32c_extend(uint32_t crc, const void *bytes, size_t length) {
    if (eg_crc32c_is_hardware_accelerated()) return crc32c_sse42(crc, bytes, length);
    return eg_crc32c_extend_portable(crc, bytes, length);
}
#else
int eg_crc32c_is_hardware_accelerated(void) { return 0; }

uint32_t eg_crc32c_extend(uint32_t crc, const void *bytes, size_t length) {
    return eg_crc32c_extend_portable(crc, bytes, length);
}
#endif
