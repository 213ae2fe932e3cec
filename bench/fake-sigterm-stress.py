#!/usr/bin/env python3
"""Stress: do the test fakes exit on SIGTERM whenever it lands? (not a benchmark; run by hand)

Starts a fake (test/fixtures/python: the mocker, the vLLM worker, the frontend) in a process group
of its own, waits for its ready line, then sends SIGTERM to the group at a random moment and counts
the fakes still alive 2 s later. Two shapes of stop:

  single  one SIGTERM, uniformly within 1 s after ready (any point of the fake's wait loop)
  double  the same, and a second SIGTERM a random 0-300 us after the first, as a detached run gets
          them at teardown: teardown signals the group, and so does the run's supervisor, which
          teardown SIGTERMs at the same time

A fake still alive after 2 s is dumped (faulthandler, SIGUSR1: every thread's stack, to show where
it hangs), then SIGKILLed with its group. Only groups this script started are signalled.

  python3 bench/fake-sigterm-stress.py [--fake mocker|vllm|frontend] [--mode single|double]
                                       [--trials N] [--parallel P] [--seed S] [--fakes DIR]

Prints one line per hung fake (the stack of its main thread) and a summary line:
`<fake> <mode>: H of N did not exit within 2 s`. Exit 1 when any did.
"""
import argparse
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAKES = os.path.join(ROOT, "test", "fixtures", "python")
# Runs the fake's module as `python -m` would, with a stack dump on SIGUSR1 (C level: works even
# when the main thread is stuck on a lock).
BOOT = ("import faulthandler, runpy, signal, sys; faulthandler.register(signal.SIGUSR1, all_threads=True); "
        "mod = sys.argv.pop(1); sys.argv[0] = mod; runpy.run_module(mod, run_name='__main__', alter_sys=True)")
READY = {
    "mocker": b"Registered endpoint 'dynamo.backend.generate'",
    "vllm": b"Registered endpoint dyn://",
    "frontend": b"Router configured",
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spin(us):
    # A busy wait: sleep() cannot time a few microseconds.
    end = time.perf_counter() + us / 1e6
    while time.perf_counter() < end:
        pass


def trial(fakes, fake, mode, rng, tmp):
    port = free_port()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "PYTHONPATH": fakes, "PYTHONDONTWRITEBYTECODE": "1",
           "DYN_FILE_KV": tmp, "FAKE_ENGINE_MAX_S": "30", "DYN_GRACEFUL_SHUTDOWN_GRACE_PERIOD_SECS": "0"}
    if fake == "frontend":
        args = ["dynamo.frontend", "--http-port", str(port), "--http-host", "127.0.0.1"]
        env["FAKE_FRONTEND_WORKERS"] = "2"
    else:
        args = [f"dynamo.{fake}"]
        env["DYN_SYSTEM_PORT"] = str(port)
    p = subprocess.Popen([sys.executable, "-c", BOOT, *args], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, start_new_session=True)
    out = []
    ready = threading.Event()

    def read():
        for line in p.stdout:
            out.append(line)
            if READY[fake] in line:
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    if not ready.wait(20):
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        return "never ready (counted as not exited): " + b"".join(out[-5:]).decode(errors="replace")
    time.sleep(rng.random())
    os.killpg(p.pid, signal.SIGTERM)
    if mode == "double":
        spin(rng.random() * 300)
        os.killpg(p.pid, signal.SIGTERM)
    try:
        p.wait(timeout=2)
        reader.join(2)
        return None
    except subprocess.TimeoutExpired:
        pass
    mark = len(out)
    os.kill(p.pid, signal.SIGUSR1)
    reader.join(1)  # the dump is written at once; the reader has it when the pipe goes quiet
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    reader.join(2)
    dump = b"".join(out[mark:]).decode(errors="replace")
    main = dump.split("Current thread")[-1] if "Current thread" in dump else dump
    return "hung; main thread:" + " <- ".join(l.strip() for l in main.splitlines()[1:8] if l.strip())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fake", default="mocker", choices=sorted(READY))
    ap.add_argument("--mode", default="double", choices=["single", "double"])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fakes", default=FAKES, help="the folder of the fake packages (default: test/fixtures/python)")
    a = ap.parse_args()
    results = []
    lock = threading.Lock()
    todo = list(range(a.trials))

    def worker(k):
        rng = random.Random(a.seed * 1000 + k)
        with tempfile.TemporaryDirectory(prefix="dd-stress-") as tmp:
            while True:
                with lock:
                    if not todo:
                        return
                    todo.pop()
                r = trial(a.fakes, a.fake, a.mode, rng, tmp)
                with lock:
                    results.append(r)
                    if r:
                        print(f"{a.fake} {a.mode}: {r}", flush=True)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(a.parallel)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    hung = sum(1 for r in results if r)
    print(f"{a.fake} {a.mode}: {hung} of {len(results)} did not exit within 2 s ({time.monotonic() - t0:.0f} s, "
          f"parallel {a.parallel}, load {open('/proc/loadavg').read().split()[0]})")
    return 1 if hung else 0


if __name__ == "__main__":
    sys.exit(main())
