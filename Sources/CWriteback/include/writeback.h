#ifndef EVENTGRAPH_WRITEBACK_H
#define EVENTGRAPH_WRITEBACK_H

#ifdef __cplusplus
extern "C" {
#endif

/// Starts writing the dirty pages of `count` bytes at `offset` of the file `descriptor` to the disk, without waiting
/// for them (Linux: `sync_file_range(SYNC_FILE_RANGE_WRITE)`, which Swift's Glibc module does not expose; elsewhere
/// nothing). A hint only: it makes nothing durable, so the caller still syncs the file; returns 0 or an `errno`.
int eg_start_writeback(int descriptor, long long offset, long long count);

#ifdef __cplusplus
}
#endif

#endif
