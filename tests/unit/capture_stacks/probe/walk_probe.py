# Run by python_walk_test under each installed CPython: samples this process's threads with
# the stack sampler (libargus_stacks_probe.so, argv[1]) from a known call chain on the main
# thread while a second thread sleeps in a known function, and prints what the test checks:
#   tid main|worker <native tid>
#   expect main|worker <frame text>   (the frames the sampler must report, leaf first)
#   sample ...                        (the probe's output, several rounds)
#   describe ...
# With `churn` as argv[2] it instead samples 200 rounds while threads start and end all the
# time and one thread recurses past the sampler's depth bound, and prints
#   churn rounds <n> samples <n> deep <samples of the deep thread> deep_ok <those cut right>
import ctypes
import sys
import threading
import time

lib = ctypes.CDLL(sys.argv[1])
ROUNDS = 5


def frame_text(code):
    name = code.co_qualname if hasattr(code, "co_qualname") else code.co_name
    return f"{name} ({code.co_filename}:{code.co_firstlineno})"


def sleeper_loop(ready, stop):
    ready.set()
    while not stop.is_set():
        time.sleep(0.02)


def probe():
    out = []
    buf = ctypes.create_string_buffer(1 << 20)
    for _ in range(ROUNDS):
        n = lib.argus_stacks_probe(buf, len(buf))
        out.append(buf.raw[:n].decode("utf-8", "replace") if n >= 0 else "probe output too large\n")
        time.sleep(0.005)
    return "".join(out)


def level_three():
    return probe()


def level_two():
    return level_three()


class Outer:
    def method(self):
        return level_two()


def churn():
    stop = threading.Event()
    deep_ready = threading.Event()

    def deep(n):
        if n == 0:
            deep_ready.set()
            stop.wait()
            return
        deep(n - 1)

    def short_lived(n):
        return sum(range(n))

    def spawner():
        while not stop.is_set():
            ts = [threading.Thread(target=short_lived, args=(200_000,)) for _ in range(4)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()

    deep_thread = threading.Thread(target=deep, args=(300,))
    deep_thread.start()
    deep_ready.wait()
    spawn_thread = threading.Thread(target=spawner)
    spawn_thread.start()
    buf = ctypes.create_string_buffer(1 << 22)
    rounds = samples = deep_samples = deep_ok = 0
    for _ in range(200):
        n = lib.argus_stacks_probe(buf, len(buf))
        if n < 0:
            continue
        rounds += 1
        for line in buf.raw[:n].decode("utf-8", "replace").splitlines():
            samples += 1
            tid, _, frames = line[len("sample "):].partition(" ")
            if int(tid) != deep_thread.native_id:
                continue
            deep_samples += 1
            parts = frames.split(" | ")
            # leaf + 128 frames + [truncated]: the innermost 128 of the 300+ frames, which
            # are Event.wait's and then deep's (qualname "churn.<locals>.deep"; 3.10: "deep").
            deep_frames = sum(1 for p in parts if p.startswith(("churn.<locals>.deep (", "deep (")))
            if len(parts) == 130 and parts[-1] == "[truncated]" and deep_frames >= 120:
                deep_ok += 1
    stop.set()
    spawn_thread.join()
    deep_thread.join()
    print(f"churn rounds {rounds} samples {samples} deep {deep_samples} deep_ok {deep_ok}")


if len(sys.argv) > 2 and sys.argv[2] == "churn":
    churn()
    sys.exit(0)

ready, stop = threading.Event(), threading.Event()
worker = threading.Thread(target=sleeper_loop, args=(ready, stop), name="sleeper")
worker.start()
ready.wait()
samples = Outer().method()
stop.set()
worker.join()

print("tid main", threading.get_native_id())
print("tid worker", worker.native_id)
module_code = sys._getframe().f_code
for code in (probe.__code__, level_three.__code__, level_two.__code__, Outer.method.__code__, module_code):
    print("expect main", frame_text(code))
print("expect worker", frame_text(sleeper_loop.__code__))
sys.stdout.write(samples)
buf = ctypes.create_string_buffer(4096)
lib.argus_stacks_describe(buf, len(buf))
for line in buf.value.decode().splitlines():
    print("describe", line)
