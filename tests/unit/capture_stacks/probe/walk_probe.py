# Run by python_walk_test under each installed CPython: samples this process's threads with
# the stack sampler (libargus_stacks_probe.so, argv[1]) from a known call chain on the main
# thread while a second thread sleeps in a known function, and prints what the test checks:
#   tid main|worker <native tid>
#   expect main|worker <frame text>   (the frames the sampler must report, leaf first)
#   sample ...                        (the probe's output, several rounds)
#   describe ...
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
