"""Runs a fake (`python -m MODULE ARGS...`) with its SIGTERM/SIGINT handlers under watch (test helper).

  python3 sigterm_probe.py MODULE [ARGS...]

A Python signal handler runs in the main thread between two bytecodes, wherever that thread is, and
again inside itself when a second signal lands (teardown and the run's supervisor both SIGTERM a
run's processes). A handler that takes a lock held at that point never returns (the fake mocker CI
saw SIGKILLed: test/fixtures/python/_fake_stop.py). Whether one signal lands in such a window is luck;
this probe makes it certain. Every Python handler the fake installs for SIGTERM or SIGINT is wrapped
so that each time a signal runs it:
  1. every call it makes is recorded (sys.setprofile: Python functions and C functions);
  2. it is run AGAIN at every bytecode of that run (a second signal landing there), untraced.
A handler run (re-entries included) that has not returned within 2 s makes the probe print the main
thread's stack and exit 3: it waits on something it will never get.

On stderr: `sigterm-probe: handler for SIGTERM` once the fake installs one (a signal sent after that
line reaches the handler), and at exit
`sigterm-probe: {"runs": N, "reentries": N, "calls": ["module.qualname", ...]}`.
"""
import json
import os
import runpy
import select
import signal
import sys
import threading
import traceback

LIMIT_S = 2.0
WATCHED = (signal.SIGTERM, signal.SIGINT)
state = {"runs": 0, "reentries": 0, "depth": 0, "calls": set()}
# Started/ended handler runs, for the watchdog ("s" / "e"); written from the handler: never blocks.
watch_r, watch_w = os.pipe()
os.set_blocking(watch_w, False)


def say(text):
    os.write(2, f"sigterm-probe: {text}\n".encode())


def watchdog():
    open_runs = 0
    while True:
        ready, _, _ = select.select([watch_r], [], [], LIMIT_S if open_runs else None)
        if not ready:
            # Straight to fd 2: the stuck thread may hold sys.stderr's lock.
            stack = "".join(traceback.format_stack(sys._current_frames()[threading.main_thread().ident]))
            say(f"a signal handler did not return within {LIMIT_S:g} s; the main thread:\n{stack}")
            os._exit(3)
        for b in os.read(watch_r, 256):
            open_runs += 1 if b == ord("s") else -1


def name_of(fn):
    owner = getattr(fn, "__module__", None) or type(getattr(fn, "__self__", None)).__name__
    return f"{owner}.{getattr(fn, '__qualname__', repr(fn))}"


def wrap(handler):
    def probed(signum, frame):
        if state["depth"]:
            # A real second signal landing inside a watched run (often inside the trace hook, where
            # profiling is paused): it is a re-entry like the ones the probe makes. Run it plain:
            # setting and clearing the hooks here would stop the outer run's record half way (CI saw
            # ['handler'] without its 'posix.write').
            state["reentries"] += 1
            handler(signum, frame)
            return
        state["depth"] += 1
        state["runs"] += 1
        os.write(watch_w, b"s")

        def profile(fr, event, arg):
            if fr.f_code is probed.__code__:
                return  # the probe's own calls (sys.settrace, sys.setprofile)
            if event == "call":
                code = fr.f_code
                state["calls"].add(f"{fr.f_globals.get('__name__')}.{getattr(code, 'co_qualname', code.co_name)}")
            elif event == "c_call":
                state["calls"].add(name_of(arg))

        def trace(fr, event, _arg):
            fr.f_trace_opcodes = True
            if event == "opcode":
                # The interpreter pauses tracing and profiling while a hook runs: this run is plain.
                state["reentries"] += 1
                handler(signum, None)
            return trace

        sys.setprofile(profile)
        sys.settrace(trace)
        try:
            handler(signum, frame)
        finally:
            sys.settrace(None)
            sys.setprofile(None)
            state["depth"] -= 1
            os.write(watch_w, b"e")

    return probed


real_signal = signal.signal


def watched_signal(signum, handler):
    if signum in WATCHED and callable(handler):
        previous = real_signal(signum, wrap(handler))
        say(f"handler for {signal.Signals(signum).name}")
        return previous
    return real_signal(signum, handler)


def main():
    module = sys.argv[1]
    sys.argv = [module, *sys.argv[2:]]
    signal.signal = watched_signal
    threading.Thread(target=watchdog, daemon=True).start()
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    finally:
        say(json.dumps({"runs": state["runs"], "reentries": state["reentries"], "calls": sorted(state["calls"])}))


if __name__ == "__main__":
    main()
