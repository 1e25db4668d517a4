# A small PyTorch training loop for bench/gpu/check.sh: a pre-LayerNorm MLP stack in bf16
# (LayerNorm -> Linear(d, 4d) -> GELU -> Linear(4d, d) + residual, `--layers` deep) on a fixed
# random batch, AdamW (foreach). Each step is wrapped in the NVTX ranges the step assembler
# knows (docs/capture/step-assembler.md, "Name rules"):
#
#   argus:step#N                          the step (N = --step-base + index)
#     forward                             forward pass and loss
#       optimizer-probe (another thread)  one cumsum launched from a second Python thread
#     backward                            loss.backward() (then, with --allreduce, one NCCL
#                                         all_reduce of that many MiB, as DDP's last bucket)
#     optimizer                           AdamW step, zero_grad
#     (torch.cuda.synchronize(): the step ends when the GPU is done)
#
# The probe checks launch attribution by thread: its kernel (a cub scan) is launched while
# the main thread sits in "forward", from a thread that sits in "optimizer-probe" (class
# optimizer); only CUPTI's external correlation (our CUSTOM2 ids, docs/capture/cupti.md)
# tells the assembler which thread launched it, so the probe's kernels are stored as
# optimizer with it and as forward without it. It runs in every mode, so every mode does
# the same work.
#
# Whether the capture shim is loaded is decided outside (check.sh runs this under
# `argus capture` or not); --profiler runs the loop under torch.profiler (CPU + CUDA
# activities) with a schedule that records continuously: cycles of one warm-up step and
# --profiler-cycle - 1 recorded steps, each cycle's result kept in memory, nothing exported
# unless --kineto-trace asks for the first cycle as Chrome-trace JSON.
#
# --allreduce MIB runs NCCL in the loop: a one-rank process group (file store, NCCL backend)
# whose all_reduce of a MIB-sized bf16 buffer each step is what the shim's NCCL profiler
# plugin (NCCL_PROFILER_PLUGIN, set by `argus capture`) reports; one rank is all one GPU
# allows (NCCL refuses two ranks on one device).
#
# Usage: python3 bench/gpu/train_loop.py --out RUN.json [--steps 200] [--warmup 30]
#          [--step-base 0] [--layers 12] [--width 1024] [--tokens 8192] [--allreduce MIB]
#          [--profiler [--profiler-cycle 20] [--kineto-trace FILE.json]]
# Writes RUN.json: {"step_ns": [measured steps' wall times], "warmup": W, "step_base": B,
#   "device": ..., "torch": ..., "profiler": {"gpu_events": E, "recorded_steps": S,
#   "kineto_json_bytes": J, "kineto_json_steps": K}} ("profiler" only with --profiler).
# Exit codes: 0 done, 2 bad arguments, 3 no CUDA device (torch missing or no GPU visible).
import argparse
import json
import os
import sys
import tempfile
import threading
import time


def parse_args():
    p = argparse.ArgumentParser(description="A small PyTorch training loop for bench/gpu/check.sh.")
    p.add_argument("--out", required=True, help="where to write the run's JSON")
    p.add_argument("--steps", type=int, default=200, help="measured steps")
    p.add_argument("--warmup", type=int, default=30, help="steps before the measured ones (stored, not timed)")
    p.add_argument("--step-base", type=int, default=0, help="number of the first step")
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--tokens", type=int, default=8192, help="rows of the batch")
    p.add_argument("--profiler", action="store_true", help="run under torch.profiler")
    p.add_argument("--profiler-cycle", type=int, default=20, help="steps per profiler cycle (1 warm-up + the rest recorded)")
    p.add_argument("--kineto-trace", help="with --profiler: export the first cycle as Chrome-trace JSON here")
    p.add_argument("--allreduce", type=int, default=0, help="MiB all-reduced through NCCL each step (0: no NCCL)")
    a = p.parse_args()
    if (a.steps < 1 or a.warmup < 0 or a.step_base < 0 or a.layers < 1 or a.width < 8 or a.tokens < 1 or a.profiler_cycle < 2
            or a.allreduce < 0):
        p.error("steps >= 1, warmup >= 0, step-base >= 0, layers >= 1, width >= 8, tokens >= 1, profiler-cycle >= 2, allreduce >= 0")
    return a


def cuda_or_exit():
    try:
        import torch
    except ImportError as e:
        print(f"train_loop: no CUDA device: torch missing ({e})", file=sys.stderr)
        sys.exit(3)
    if not torch.cuda.is_available():
        print(f"train_loop: no CUDA device: torch {torch.__version__} sees none (torch.cuda.is_available() is false)",
              file=sys.stderr)
        sys.exit(3)
    return torch


class Probe:
    """A second thread that launches one small kernel inside its own "optimizer-probe" range."""

    def __init__(self, torch):
        self.torch = torch
        self.x = torch.arange(4096, device="cuda", dtype=torch.float32)
        self.go = threading.Event()
        self.done = threading.Event()
        threading.Thread(target=self._run, name="optimizer-probe", daemon=True).start()

    def _run(self):
        nvtx = self.torch.cuda.nvtx
        while True:
            self.go.wait()
            self.go.clear()
            nvtx.range_push("optimizer-probe")
            self.torch.cumsum(self.x, 0)
            nvtx.range_pop()
            self.done.set()

    def __call__(self):
        self.go.set()
        self.done.wait()
        self.done.clear()


def build(torch, a):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.ln = nn.LayerNorm(d)
            self.fc1 = nn.Linear(d, 4 * d)
            self.fc2 = nn.Linear(4 * d, d)

        def forward(self, x):
            return x + self.fc2(nn.functional.gelu(self.fc1(self.ln(x))))

    torch.manual_seed(0)
    model = nn.Sequential(*[Block(a.width) for _ in range(a.layers)]).to("cuda", torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    x = torch.randn(a.tokens, a.width, device="cuda", dtype=torch.bfloat16)
    return model, opt, x


def nccl_bucket(torch, mib):
    """A one-rank NCCL process group and the buffer each step all-reduces; None without."""
    if mib == 0:
        return None
    import torch.distributed as dist
    store = os.path.join(tempfile.mkdtemp(prefix="train_loop."), "pg")
    dist.init_process_group("nccl", init_method=f"file://{store}", rank=0, world_size=1, device_id=torch.device("cuda:0"))
    return torch.ones(mib << 19, device="cuda", dtype=torch.bfloat16)  # 2 bytes each


def main():
    a = parse_args()
    torch = cuda_or_exit()
    model, opt, x = build(torch, a)
    probe = Probe(torch)
    nvtx = torch.cuda.nvtx
    bucket = nccl_bucket(torch, a.allreduce)

    prof = None
    results = []  # one profiler result per finished cycle, counted after the timed loop
    recorded = 0
    trace_bytes = 0
    if a.profiler:
        from torch.profiler import ProfilerAction, ProfilerActivity, profile, schedule

        def on_ready(p):
            nonlocal trace_bytes
            results.append(p.profiler.kineto_results)
            if a.kineto_trace and len(results) == 1:
                p.export_chrome_trace(a.kineto_trace)
                trace_bytes = os.path.getsize(a.kineto_trace)

        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                       schedule=schedule(wait=0, warmup=1, active=a.profiler_cycle - 1, repeat=0),
                       on_trace_ready=on_ready)
        prof.start()

    step_ns = []
    for i in range(a.warmup + a.steps):
        if prof is not None and prof.current_action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            recorded += 1
        t0 = time.perf_counter_ns()
        nvtx.range_push(f"argus:step#{a.step_base + i}")
        nvtx.range_push("forward")
        probe()
        loss = model(x).float().pow(2).mean()
        nvtx.range_pop()
        nvtx.range_push("backward")
        loss.backward()
        if bucket is not None:
            torch.distributed.all_reduce(bucket)
        nvtx.range_pop()
        nvtx.range_push("optimizer")
        opt.step()
        opt.zero_grad(set_to_none=True)
        nvtx.range_pop()
        torch.cuda.synchronize()
        nvtx.range_pop()
        if prof is not None:
            prof.step()
        if i >= a.warmup:
            step_ns.append(time.perf_counter_ns() - t0)

    out = {"step_ns": step_ns, "warmup": a.warmup, "step_base": a.step_base,
           "device": torch.cuda.get_device_name(), "torch": torch.__version__}
    if prof is not None:
        # A step recorded but not yet reported (the last, unfinished cycle) is reported here.
        prof.stop()
        from torch.autograd import DeviceType
        gpu_events = sum(1 for r in results for e in r.events() if e.device_type() == DeviceType.CUDA)
        out["profiler"] = {"gpu_events": gpu_events, "recorded_steps": recorded, "kineto_json_bytes": trace_bytes,
                           "kineto_json_steps": a.profiler_cycle - 1 if trace_bytes else 0}
    if bucket is not None:
        out["allreduce_bytes"] = bucket.numel() * bucket.element_size()
        torch.distributed.destroy_process_group()
    with open(a.out, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
