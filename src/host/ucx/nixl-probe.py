"""dynamo-dev's NIXL/UCX transfer probe (shipped in dist/host/ucx/, run by src/host/ucx/nixl-probe.ts).

Two NIXL agents in two processes with the UCX backend, as the prefill and decode workers would
have them: each registers a buffer, they exchange metadata, each WRITEs its buffer into the
other's a few times, and the receiver checks the bytes. The environment is the workers' (UCX_*
included); UCX_PROTO_INFO=y (set by the caller) makes UCX print which lane carried the data.

    python nixl-probe.py [--bytes N] [--rounds N] [--mem dram|vram|auto] [--device N]

Prints UCX's own lines as they come, and one line `@@dynamo-dev-nixl@@ {json}` at the end. The
second process is this script again (`--role target`), talking over two pipes (never stdout: UCX
prints there). Both leave with os._exit: some NIXL builds raise SIGSEGV at interpreter exit
(FACTS §11), after the result is out.

NIXL's Python API as used here: nixl_agent(name, nixl_agent_config(backends=["UCX"])),
register_memory([(addr, size, dev, "")], "DRAM"|"VRAM"), get_agent_metadata, add_remote_agent,
get_xfer_descs / get_serialized_descs / deserialize_descs, initialize_xfer("WRITE", local,
remote, peer, notif), transfer, check_xfer_state ("DONE" | "PROC" | "ERR"),
check_remote_xfer_done(peer, tag) (a tag prefix; it polls getNotifs itself)
(ai-dynamo/nixl src/api/python/_api.py at 0169231; the nixl 1.4.1 wheel's nixl_cu13/_api.py).
UCX_PROTO_INFO's tables: openucx/ucx src/ucp/proto/proto_debug.c, src/ucp/core/ucp_ep.c (the
"intra-node cfg#N" names); read in src/host/ucx/parse-nixl-probe.ts.
"""
import argparse
import base64
import hashlib
import json
import os
import sys
import time

MARKER = "@@dynamo-dev-nixl@@"


def now():
    return time.monotonic()


def c_stdio(op):
    """UCX logs through C's stdout, which is fully buffered on a pipe and flushed only for errors
    (openucx/ucx src/ucs/debug/log.c): line-buffered, each line reaches the pipe whole (never split
    by the other process's output), and flushed before os._exit, which skips C's own exit flush."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        if op == "line":
            stdout = ctypes.c_void_p.in_dll(libc, "stdout")
            libc.setvbuf(stdout, None, 1, 0)  # _IOLBF
        else:
            libc.fflush(None)
    except Exception:  # noqa: BLE001 - not glibc: the lines may come later or in pieces, never wrong
        pass


class Pipe:
    """One JSON object per line over a pair of fds."""

    def __init__(self, rfd, wfd, deadline):
        self.r = os.fdopen(rfd, "r", encoding="utf8")
        self.w = os.fdopen(wfd, "w", encoding="utf8")
        self.deadline = deadline

    def send(self, obj):
        self.w.write(json.dumps(obj) + "\n")
        self.w.flush()

    def recv(self):
        import select

        if not select.select([self.r], [], [], max(0.0, self.deadline - now()))[0]:
            raise TimeoutError("the other process did not answer by the probe's deadline")
        line = self.r.readline()
        if not line:
            raise EOFError("the other process closed its pipe")
        return json.loads(line)


def ucx_loaded():
    """Which libucp this process loaded (after an agent exists) and its version, from the library itself."""
    path = None
    try:
        with open("/proc/self/maps", encoding="utf8") as f:
            for line in f:
                name = line.rsplit(None, 1)[-1] if line.count("/") else ""
                if "/libucp" in name and ".so" in name:
                    path = name.strip()
                    break
    except OSError:
        pass
    version = None
    if path:
        try:
            import ctypes
            lib = ctypes.CDLL(path)
            lib.ucp_get_version_string.restype = ctypes.c_char_p
            version = lib.ucp_get_version_string().decode()
        except Exception:  # noqa: BLE001 - a fact we can do without
            version = None
    return {"ucpPath": path, "ucxVersion": version}


def nixl_version():
    try:
        from importlib import metadata
    except Exception:  # noqa: BLE001
        return None
    for d in ("nixl", "nixl-cu13", "nixl-cu12"):
        try:
            return metadata.version(d)
        except Exception:  # noqa: BLE001
            pass
    # No distribution metadata (a source tree on PYTHONPATH): the package's own word, if any.
    return getattr(sys.modules.get("nixl"), "__version__", None)


def make_buffer(mem, nbytes, device, seed):
    """(kind, addr, dev, read_back, fill, why_dram): a buffer of nbytes in VRAM or DRAM."""
    why = None
    if mem in ("vram", "auto"):
        try:
            import torch  # the run's interpreter has it where vLLM is installed

            if not torch.cuda.is_available():
                raise RuntimeError("torch sees no CUDA device")
            t = torch.empty(nbytes, dtype=torch.uint8, device="cuda:%d" % device)

            def read_back():
                return t.cpu().numpy().tobytes()

            def fill(data):
                t.copy_(torch.frombuffer(bytearray(data), dtype=torch.uint8).to(t.device))
                torch.cuda.synchronize()

            fill(bytes(nbytes))
            return "VRAM", t.data_ptr(), device, read_back, fill, None, t
        except Exception as e:  # noqa: BLE001 - DRAM is still a real transfer
            if mem == "vram":
                raise
            why = "%s: %s" % (type(e).__name__, e)
    import ctypes  # not numpy: the probe needs nothing NIXL itself does not

    a = ctypes.create_string_buffer(nbytes)

    def read_back():
        return ctypes.string_at(a, nbytes)

    def fill(data):
        ctypes.memmove(a, data, nbytes)

    return "DRAM", ctypes.addressof(a), 0, read_back, fill, why, a


def pattern(seed, nbytes):
    """Bytes that differ per sender and round, so a stale buffer never passes the check."""
    block = hashlib.sha256(seed.encode()).digest() * 128  # 4 KiB
    return (block * (nbytes // len(block) + 1))[:nbytes]


def run(role, args, pipe, out):
    """Both roles: the same steps, each WRITEs to the other in turn (initiator first)."""
    stage = "import"
    try:
        from nixl._api import nixl_agent, nixl_agent_config

        out["nixl"] = nixl_version()
        stage = "agent"
        me = "dd-probe-" + role
        peer_name = "dd-probe-" + ("target" if role == "initiator" else "initiator")
        agent = nixl_agent(me, nixl_agent_config(backends=["UCX"]))
        out.update(ucx_loaded())
        stage = "register"
        kind, addr, dev, read_back, fill, why, keep = make_buffer(args.mem, args.bytes, args.device, role)
        out["mem"] = kind
        if why:
            out["memFallback"] = why
        reg = agent.register_memory([(addr, args.bytes, dev, "")], kind)
        if reg is None:
            raise RuntimeError("register_memory returned nothing")
        local = agent.get_xfer_descs([(addr, args.bytes, dev)], kind)
        stage = "metadata"
        pipe.send({"meta": base64.b64encode(agent.get_agent_metadata()).decode(),
                   "descs": base64.b64encode(agent.get_serialized_descs(local)).decode(),
                   "ok": True})
        theirs = pipe.recv()
        if not theirs.get("ok"):
            out["peerFailed"] = True
            out["peerStage"] = theirs.get("stage")
            out["peerError"] = theirs.get("error")
            return 1
        agent.add_remote_agent(base64.b64decode(theirs["meta"]))
        remote = agent.deserialize_descs(base64.b64decode(theirs["descs"]))
        times = []
        order = ["initiator", "target"]
        for rnd in range(args.rounds):
            for sender in order:
                seed = "%s-%d" % (sender, rnd)
                if sender == role:
                    stage = "transfer"
                    data = pattern(seed, args.bytes)
                    fill(data)
                    t0 = now()
                    h = agent.initialize_xfer("WRITE", local, remote, peer_name, seed.encode())
                    state = agent.transfer(h)
                    while state not in ("DONE", "ERR"):
                        if now() > args.deadline:
                            raise TimeoutError("transfer not DONE by the probe's deadline")
                        state = agent.check_xfer_state(h)
                    if state == "ERR":
                        raise RuntimeError("check_xfer_state: ERR")
                    times.append((now() - t0) * 1000.0)
                    agent.release_xfer_handle(h)
                    pipe.send({"sent": seed, "sha": hashlib.sha256(data).hexdigest()})
                    ack = pipe.recv()
                    if not ack.get("verified"):
                        out["peerFailed"] = True
                        out["badBytes"] = ack.get("why")
                        return 1
                else:
                    stage = "receive"
                    msg = pipe.recv()
                    if "sent" not in msg:
                        out["peerFailed"] = True
                        return 1
                    # Without NIXL's progress thread the receiver must poll for notifications
                    # (FACTS §11); with it the poll is cheap.
                    while not agent.check_remote_xfer_done(peer_name, msg["sent"].encode()):
                        if now() > args.deadline:
                            raise TimeoutError("no notification of the transfer by the probe's deadline")
                        time.sleep(0.0005)
                    got = hashlib.sha256(read_back()).hexdigest()
                    ok = got == msg["sha"]
                    pipe.send({"verified": ok, "why": None if ok else "bytes differ after round %d" % rnd})
                    if not ok:
                        out["badBytes"] = "bytes differ after round %d" % rnd
                        return 1
        out["writeMs"] = [round(t, 3) for t in times]
        out["verified"] = args.rounds
        if role == "target":
            pipe.send({"final": {"writeMs": out["writeMs"], "mem": kind, "memFallback": why}})
        else:
            fin = pipe.recv().get("final", {})
            out["targetWriteMs"] = fin.get("writeMs")
            out["targetMem"] = fin.get("mem")
            if fin.get("memFallback"):
                out["targetMemFallback"] = fin.get("memFallback")
        stage = "done"
        del keep
        return 0
    except BaseException as e:  # noqa: BLE001 - every failure is a fact for the caller
        out["stage"] = stage
        out["error"] = "%s: %s" % (type(e).__module__ + "." + type(e).__name__ if type(e).__module__ not in ("builtins",) else type(e).__name__, e)
        if stage in ("agent", "register", "metadata"):
            try:
                pipe.send({"ok": False, "stage": stage, "error": out["error"]})
            except Exception:  # noqa: BLE001
                pass
        return 1
    finally:
        out.setdefault("stage", stage)
        if "ucxVersion" not in out and stage not in ("import",):
            out.update(ucx_loaded())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--role", default="initiator")
    p.add_argument("--bytes", type=int, default=4 << 20)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--mem", default="dram", choices=["dram", "vram", "auto"])
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--fds", default="")
    args = p.parse_args()
    args.deadline = now() + args.seconds
    c_stdio("line")
    out = {"role": args.role, "pid": os.getpid()}
    if args.role == "target":
        rfd, wfd = (int(x) for x in args.fds.split(","))
        rc = run("target", args, Pipe(rfd, wfd, args.deadline), out)
        # The target's facts reach the initiator's result through its own pipe message.
        sys.stdout.flush()
        sys.stderr.flush()
        c_stdio("flush")
        os._exit(rc)

    import subprocess

    to_target_r, to_target_w = os.pipe()
    from_target_r, from_target_w = os.pipe()
    t0 = now()
    child = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--role", "target", "--bytes", str(args.bytes),
         "--rounds", str(args.rounds), "--mem", args.mem, "--device", str(args.device),
         "--seconds", str(args.seconds), "--fds", "%d,%d" % (to_target_r, from_target_w)],
        pass_fds=(to_target_r, from_target_w), stdin=subprocess.DEVNULL,
    )
    os.close(to_target_r)
    os.close(from_target_w)
    pipe = Pipe(from_target_r, to_target_w, args.deadline)
    rc = run("initiator", args, pipe, out)
    try:
        pipe.w.close()
    except Exception:  # noqa: BLE001
        pass
    try:
        code = child.wait(timeout=max(0.5, args.deadline - now() + 1))
    except subprocess.TimeoutExpired:
        child.kill()
        code = child.wait()
    out["targetExit"] = code if code >= 0 else "signal %d" % -code
    out["elapsedMs"] = round((now() - t0) * 1000.0, 1)
    sys.stdout.flush()
    sys.stderr.flush()
    c_stdio("flush")
    sys.stdout.write("\n%s %s\n" % (MARKER, json.dumps(out)))
    sys.stdout.flush()
    os._exit(0 if rc == 0 and code == 0 else 1)


if __name__ == "__main__":
    main()
