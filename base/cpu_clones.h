// ARGUS_AVX2_CLONES: compile a function twice, for AVX2 and for the baseline, and let the
// loader pick by the CPU (x86-64 ELF ifuncs). Release builds target the baseline x86-64, so
// without it 256-bit lanes become pairs of SSE2 operations (and 64-bit compares scalar ones).
#pragma once

#if defined(__x86_64__) && defined(__ELF__)
#define ARGUS_AVX2_CLONES [[gnu::target_clones("avx2", "default")]]
#else
#define ARGUS_AVX2_CLONES
#endif
