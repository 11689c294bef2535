// The module's one function is inline in its header (`eg_prefetch`); a C target needs a source file.
#include "prefetch.h"
