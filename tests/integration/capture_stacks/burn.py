# The stack sampler's end-to-end workload (capture_stacks_test): a pure-Python "training
# loop" whose steps are NVTX ranges `ProfilerStep#N` (pushed through nvtx_ctypes, as PyTorch's
# profiler names its steps), each spending a known share of its wall time in burn_a and the
# rest in burn_b, both called from train_step.
#
#   python3 burn.py LIBNVTX_CTYPES STEPS STEP_SECONDS SHARE_A
import ctypes
import sys
import time

nvtx = ctypes.CDLL(sys.argv[1])
steps, step_s, share_a = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])


def burn_a(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def burn_b(n):
    x = 0
    for i in range(n):
        x += i ^ 7
    return x


def train_step(step):
    start = time.perf_counter()
    while time.perf_counter() - start < step_s * share_a:
        burn_a(2000)
    while time.perf_counter() - start < step_s:
        burn_b(2000)


for step in range(steps):
    nvtx.argus_test_range_push(f"ProfilerStep#{step}".encode())
    train_step(step)
    nvtx.argus_test_range_pop()
