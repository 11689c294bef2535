#ifndef EVENTGRAPH_CLZ4_SHIM_H
#define EVENTGRAPH_CLZ4_SHIM_H
#include <lz4.h>
#endif
