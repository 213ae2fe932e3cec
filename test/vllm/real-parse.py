"""The real argument parsers of the installed ai-dynamo[vllm] (test:vllm; run with the tier's venv).

Reads {"argvs": [{"module": "dynamo.vllm" | "dynamo.frontend", "args": [...]}, ...]} on stdin and
prints one JSON document: for each argv whether the real parser accepts it (and its error text if
not), and every option string each real parser knows ("flags").

Without a GPU, vLLM's engine-args parser cannot be built: AsyncEngineArgs.add_cli_args
instantiates DeviceConfig, which raises "Failed to infer device type" (vllm 0.31.0
vllm/config/device.py). dynamo.frontend 1.6.1 (dynamo/frontend/main.py parse_args) works around it
by setting vllm.platforms.current_platform to CpuPlatform before importing vllm.engine.arg_utils;
the same is done here, so the parser is the real one with only the platform chosen.
"""
import argparse
import contextlib
import io
import json
import sys

import vllm.platforms

if vllm.platforms.current_platform.device_type == "":
    from vllm.platforms.cpu import CpuPlatform

    vllm.platforms.current_platform = CpuPlatform()

from dynamo.frontend import main as frontend_main  # noqa: E402
from dynamo.frontend.frontend_args import FrontendArgGroup  # noqa: E402
from dynamo.vllm import args as vllm_args  # noqa: E402


def options(parser):
    return sorted({s for a in parser._actions for s in a.option_strings if s.startswith("--")})


def vllm_flags():
    p = argparse.ArgumentParser(add_help=False)
    vllm_args.DynamoRuntimeArgGroup().add_arguments(p)
    vllm_args.DynamoVllmArgGroup().add_arguments(p)
    vllm_args.register_worker_router_help(p)
    e = vllm_args.FlexibleArgumentParser(add_help=False)
    vllm_args.AsyncEngineArgs.add_cli_args(e, async_args_only=False)
    return sorted(set(options(p)) | set(options(e)))


def frontend_flags():
    p = argparse.ArgumentParser(add_help=False)
    FrontendArgGroup().add_arguments(p)
    return options(p)


def check(module, args):
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            if module == "dynamo.vllm":
                vllm_args._parse_cli_args(list(args))
            elif module == "dynamo.frontend":
                old = sys.argv
                sys.argv = ["python -m dynamo.frontend", *args]
                try:
                    frontend_main.parse_args()
                finally:
                    sys.argv = old
            else:
                return {"ok": False, "error": f"no real parser for {module}"}
    except SystemExit as e:
        if e.code not in (0, None):
            return {"ok": False, "error": (err.getvalue().strip().splitlines() or [f"exit {e.code}"])[-1]}
    except Exception as e:  # a value the parser's own validation refuses
        return {"ok": False, "error": f"{type(e).__name__}: {e}"}
    return {"ok": True}


def main():
    req = json.load(sys.stdin)
    results = [check(a["module"], a["args"]) for a in req.get("argvs", [])]
    print(json.dumps({"results": results, "flags": {"dynamo.vllm": vllm_flags(), "dynamo.frontend": frontend_flags()}}))


if __name__ == "__main__":
    main()
