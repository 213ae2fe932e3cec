#!/usr/bin/env python3
"""The floor for `doctor --json` in bench/doctor-floor.mjs (ours; not part of dynamo-dev).

The least a stdlib-only Python checker does to learn the facts that Dynamo's own checker
(deploy/sanity_check.py) and doctor both report: the GPUs with their memory and driver
(`nvidia-smi --query-gpu`), the driver's CUDA version (`nvidia-smi --version`), and which of the
Python packages a run needs import, at which versions, with torch's CUDA build. Like any plain
script, and like the upstream checker, it asks one thing after another. It judges nothing:
doctor checks far more (compute apps, leftovers, locks, ports, UCX, compat libraries, logs).
Prints one JSON document; exit 0.
"""
import importlib
import json
import re
import subprocess
import sys


def smi(*args):
    try:
        r = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)
    return (r.stdout if r.returncode == 0 else None), r.stderr.strip()


def gpus():
    fields = ["index", "name", "uuid", "driver_version", "memory.total", "memory.used", "memory.free"]
    out, err = smi("--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits")
    if out is None:
        return {"error": err}
    rows = [dict(zip(fields, (v.strip() for v in line.split(",")))) for line in out.splitlines() if line.strip()]
    version, _ = smi("--version")
    m = re.search(r"CUDA Version\s*:\s*([\d.]+)", version or "")
    return {"gpus": rows, "cuda": m.group(1) if m else None}


def modules():
    found = {}
    for name in ["dynamo", "torch", "nixl", "vllm"]:
        try:
            mod = importlib.import_module(name)
            entry = {"ok": True, "version": getattr(mod, "__version__", None)}
            if name == "torch":
                entry["cuda"] = getattr(getattr(mod, "version", None), "cuda", None)
        except Exception as e:  # a broken package is a fact, not a crash
            entry = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
        found[name] = entry
    return found


print(json.dumps({"python": sys.version.split()[0], "gpu": gpus(), "modules": modules()}))
