# What one stack sample costs the sampler thread (docs/capture/stacks.md, "Cost"): two Python
# threads, each 20 frames deep (the main thread calls the sampler from there; a worker spins
# in pure Python), sampled `rounds` times by the real StackSampler through
# libargus_stacks_probe.so (built with the tests: build/tests/unit/capture_stacks/probe/).
# Steady state: code objects and stacks are cached after the first round.
#
# Usage: python3 bench/stack_sample.py PROBE_SO [rounds=2000] [--callgrind]
#   --callgrind (under bench/callgrind_stacks.sh): instrumentation on only around the rounds,
#   the worker blocked (at the same depth) instead of spinning; prints
#   "callgrind-case<TAB>stack-sample<TAB>sample<TAB><samples>".
# Prints figures; asserts nothing.
import ctypes
import sys
import threading
import time

lib = ctypes.CDLL(sys.argv[1])
lib.argus_stacks_bench.restype = ctypes.c_double
rounds = int(sys.argv[2]) if len(sys.argv) > 2 and not sys.argv[2].startswith("--") else 2000
callgrind = "--callgrind" in sys.argv
DEPTH = 20
THREADS = 2


def nest(depth, leaf):
    if depth <= 1:
        return leaf()
    return nest(depth - 1, leaf)


stop = threading.Event()
ready = threading.Event()


def spin():
    ready.set()
    if callgrind:
        # Instrumentation is process-wide: a spinning worker's own instructions would count.
        stop.wait()
        return
    x = 0
    while not stop.is_set():
        x += 1


worker = threading.Thread(target=lambda: nest(DEPTH - 3, spin))  # + lambda, run, _bootstrap_inner ... ~20
worker.start()
ready.wait()
wall0 = time.perf_counter()
per_round = nest(DEPTH, lambda: lib.argus_stacks_bench(rounds, 1 if callgrind else 0))
wall_round = (time.perf_counter() - wall0) * 1e9 / rounds
stop.set()
worker.join()
buf = ctypes.create_string_buffer(4096)
lib.argus_stacks_describe(buf, len(buf))
stats = buf.value.decode().split()
ticks = int(stats[stats.index("ticks") + 1])
reads = int(stats[stats.index("memory_reads") + 1])
if callgrind:
    print(f"callgrind-case\tstack-sample\tsample\t{rounds * THREADS}")
else:
    print(f"{rounds} rounds x {THREADS} threads of ~{DEPTH} Python frames: sampler CPU {per_round:.0f} ns per round, "
          f"{per_round / THREADS:.0f} ns per sample (wall {wall_round / THREADS:.0f} ns); at 50 Hz "
          f"{per_round * 50 / 1e6:.3f} ms of CPU per second ({per_round * 50 / 1e7:.4f}% of one core); "
          f"{reads / ticks:.1f} memory-read system calls per round")
