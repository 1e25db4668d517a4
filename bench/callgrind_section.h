// Callgrind client requests for the benchmarks' --callgrind modes: a bench turns
// instrumentation on only around what it measures and dumps one labelled profile per
// section (CALLGRIND_START/STOP_INSTRUMENTATION, CALLGRIND_DUMP_STATS_AT), which
// bench/callgrind_dumps.sh reads back. Without valgrind's headers ARGUS_HAVE_CALLGRIND is 0
// and a bench says so instead of measuring.
#pragma once

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define ARGUS_HAVE_CALLGRIND 1
#else
#define ARGUS_HAVE_CALLGRIND 0
#endif
