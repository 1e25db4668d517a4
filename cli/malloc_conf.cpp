// jemalloc's options for the executables that link it (CMakeLists.txt, argus_link_allocator):
// jemalloc reads this global at its first allocation; MALLOC_CONF in the environment still
// overrides each option it names.
//
// Memory a query frees is kept for the next query instead of going back to the OS: faulting
// pages in again costs more than a rolling median's arithmetic on these machines (~15 us a
// fault). Figures: bench_query_runs, the rolling 21-step median over 200 steps of 10,240
// ranks (2 M result rows), median of 7 runs (docs/query/language.md, Engine):
//   jemalloc's defaults                      0.418 s, 20,000 page faults a run
//   percpu_arena:percpu                      0.415 s   (30 runs over 1,024 ranks: 3x faster)
//   + oversize_threshold:0                   0.241 s,  9,300
//   + dirty_decay_ms:-1                      0.104 s,    281
// - percpu_arena: one arena per CPU, used by whichever thread runs there. When measured,
//   each query scanned on threads of its own; with the default (4 arenas per CPU, bound to
//   threads) the next query's new threads did not allocate where the last one freed. Scans
//   and Gathers now run on the kept worker threads (base/worker_threads.h).
// - oversize_threshold:0: allocations over 8 MiB (a large result's columns) come from the
//   arenas too, not from one that purges them as soon as they are freed.
// - dirty_decay_ms:-1: no purging on a timer (its gradual purge still faulted half the
//   pages back in between runs a second apart). argusd returns the kept pages every 10 s
//   in which no query ran instead (base/allocator.h); the CLI's processes end.
extern "C" {
// NOLINTNEXTLINE: the name and type are jemalloc's.
const char* malloc_conf = "percpu_arena:percpu,oversize_threshold:0,dirty_decay_ms:-1";
}
