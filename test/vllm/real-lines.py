"""Log lines and the process title of the installed vLLM, produced by its own code (test:vllm).

Usage: python real-lines.py engine|main   (run with the tier's venv; prints what the real code
writes to stdout/stderr, then one JSON line {"cmdline": ...} on stdout).

engine: behaves as vLLM 0.31.0's engine core process under dynamo.vllm 1.6.1 does. Dynamo's
  configure_vllm_logging (dynamo/runtime/logging.py) sets VLLM_CONFIGURE_LOGGING=1, so the
  subprocess configures vLLM's own DEFAULT_LOGGING_CONFIG when it imports vllm (vllm/logger.py:
  `(EngineCore pid=N) INFO MM-DD HH:MM:SS [file.py:N] message`); run_engine_core
  (vllm/v1/engine/core.py) configures logging from the engine's LoggingConfig, calls set_process_title("EngineCore") and decorate_logs() in the
  process multiprocessing named "EngineCore" (vllm/v1/engine/utils.py). The KV line comes from the
  real update_kv_cache_capacity (vllm/v1/core/kv_cache_utils.py) with a config standing in for
  the engine's: 14,816 tokens at max_model_len 4,096 on cuda (FACTS section 7's measured size).
main: the worker process itself: configure_dynamo_logging() as dynamo/vllm/main.py does at import,
  then the model config's "Resolved architecture" line through vLLM's logger.
"""
import json
import multiprocessing
import os
import sys
from types import SimpleNamespace


def engine():
    os.environ["VLLM_CONFIGURE_LOGGING"] = "1"
    multiprocessing.current_process().name = "EngineCore"
    from vllm.config.logging import LoggingConfig
    from vllm.logger import configure_logging
    from vllm.utils.system_utils import decorate_logs, set_process_title
    from vllm.v1.core import kv_cache_utils

    # run_engine_core: configure_logging(vllm_config.logging_config), the default LoggingConfig.
    configure_logging(LoggingConfig())
    set_process_title("EngineCore")
    decorate_logs()
    # The engine's capacity (tokens = int(concurrency * max_model_len)): 3.6171875 * 4096 = 14,816.
    kv_cache_utils.get_max_concurrency_for_kv_cache_config = lambda vllm_config, kv_cache_config: 3.6171875
    cfg = SimpleNamespace(
        model_config=SimpleNamespace(max_model_len=4096),
        cache_config=SimpleNamespace(),
        device_config=SimpleNamespace(device_type="cuda"),
    )
    kv_cache_utils.update_kv_cache_capacity(cfg, None)


def main_process():
    from dynamo.runtime.logging import configure_dynamo_logging

    configure_dynamo_logging()
    import logging

    # vllm/config/model.py logs this while it resolves the model's architecture.
    logging.getLogger("vllm.config.model").info("Resolved architecture: %s", "Qwen3ForCausalLM")


if __name__ == "__main__":
    (engine if sys.argv[1] == "engine" else main_process)()
    for h in __import__("logging").getLogger("vllm").handlers:
        h.flush()
    sys.stderr.flush()
    with open("/proc/self/cmdline", "rb") as f:
        cmdline = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    sys.stdout.write(json.dumps({"cmdline": cmdline}) + "\n")
