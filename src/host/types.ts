// Typed facts gathered from the machine. Pure data: adapters in src/host/ produce them,
// checks in src/doctor/checks/ judge them, tests build them from fixtures.

export interface Gpu {
  index: number;
  name: string;
  uuid: string | null;
  driverVersion: string | null;
  /** MiB; null when nvidia-smi says [N/A] (unified memory, e.g. GB10). */
  memoryTotalMiB: number | null;
  memoryUsedMiB: number | null;
  memoryFreeMiB: number | null;
  computeCap: string | null;
  pciBusId: string | null;
}

export type GpuFailureReason =
  | 'not-installed' // nvidia-smi not on PATH
  | 'no-driver' // couldn't communicate with the NVIDIA driver
  | 'mismatch' // Driver/library version mismatch
  | 'no-devices' // No devices were found
  | 'error'; // anything else (non-zero exit, unparseable output, timeout)

export type GpuFacts =
  | {
      ok: true;
      gpus: Gpu[];
      driverVersion: string | null;
      /** Highest CUDA version the driver supports ("CUDA Version: 12.8"), null if not found. */
      cudaVersion: string | null;
    }
  | { ok: false; reason: GpuFailureReason; message: string };

export interface ComputeApp {
  pid: number;
  processName: string;
  usedMiB: number | null;
  gpuUuid: string | null;
}

export type ComputeAppsFacts = { ok: true; apps: ComputeApp[] } | { ok: false; message: string };

/** One process (listProcesses reads all but pid and cmd on first ask: look at cmd first). */
export interface ProcessInfo {
  pid: number;
  ppid: number;
  uid: number | null;
  user: string | null;
  /** Full command line (args), never the 15-char comm. */
  cmd: string;
  name: string;
  /** Start time as clock ticks since boot (field 22 of /proc/PID/stat); the pid-reuse guard. */
  startTicks: number | null;
  /** Milliseconds since the process started, when knowable. */
  ageMs: number | null;
  pgid: number | null;
}

export type EngineKind = 'vllm-engine' | 'dynamo';

/** One module the Python probe imported (or failed to). */
export interface PythonModule {
  ok: boolean;
  version: string | null;
  error: string | null;
  /**
   * Where it was imported from: its package folder, or its file (null when it did not import).
   * Absent only in facts not made by the probe.
   */
  path?: string | null;
  /** Every folder of the package: more than one for a namespace package (dynamo) spread over several installs. */
  paths?: string[];
}

export interface PythonFacts {
  /** The interpreter that was asked (path or name). */
  interpreter: string;
  ok: boolean;
  /** Why the interpreter could not be asked (not found, crashed, bad output). */
  error: string | null;
  pythonVersion: string | null;
  modules: Record<string, PythonModule>;
  /** torch.version.cuda, e.g. "12.9"; null for CPU builds or when torch is missing. */
  torchCuda: string | null;
  /**
   * Installed distributions by their metadata, whether or not their modules import
   * ({"ai-dynamo": "1.6.1", "ai-dynamo-runtime": null}); absent in facts not made by the probe.
   */
  dists?: Record<string, string | null>;
  /** sys.executable: the interpreter's own path (`python3` resolved); absent in facts not made by the probe. */
  executable?: string;
}

export interface CompatFacts {
  /** LD_LIBRARY_PATH entries that look like CUDA forward-compat dirs (".../compat"). */
  ldLibraryPathCompat: string[];
  /** `ldconfig -p` libcuda.so.1 entries that live under a compat dir. */
  ldconfigCompat: string[];
  /** Every libcuda.so.1 path ldconfig knows (two or more hints at a compat package). */
  ldconfigLibcuda: string[];
  ldconfigError: string | null;
}

/** Defined beside the rules that use it (plan/gpu-class.ts: pure knowledge, below host/). */
export type { GpuClass } from '../plan/gpu-class.js';

export interface LockHolder {
  pid: number;
  cmd: string | null;
}

export interface HfLockFile {
  path: string;
  /** Processes holding a flock on it (from /proc/locks, dev+inode matched). */
  holders: LockHolder[];
  mtimeMs: number;
}

export interface HfModelFacts {
  cacheRoot: string;
  model: string;
  /** models--ORG--NAME folder, null when the model is not cached. */
  modelDir: string | null;
  snapshot: string | null;
  configPath: string | null;
  locks: HfLockFile[];
  incompleteBlobs: { path: string; sizeBytes: number; mtimeMs: number }[];
  /** /proc/locks could not be read (non-Linux); lock holders unknown. */
  locksUnknown: boolean;
}

export interface UcxTransport {
  name: string;
  device: string;
  type: string | null;
  activeMessages: boolean;
}

export interface UcxFacts {
  /** UCX_TLS as set in the environment, or null. */
  tls: string | null;
  /** Transports ucx_info -d lists; null when ucx_info is not available. */
  transports: UcxTransport[] | null;
  ucxInfoError: string | null;
  version: string | null;
  /** `ucx_info -v`'s "Library path" (which UCX ucx_info is); absent or null when not printed. */
  libraryPath?: string | null;
}

export interface PortFact {
  /** The plan's name for it, e.g. "frontend.http" or "agg-0.system". */
  name: string;
  port: number;
  free: boolean;
  /** Not free because this user may not bind it (EACCES: a port below 1024 without root), not because it is taken. */
  denied?: boolean;
  /** Holder pid when knowable (from /proc/net/tcp inodes). */
  holderPid: number | null;
  holderCmd: string | null;
}

export interface HttpProbe {
  url: string;
  ok: boolean;
  status: number | null;
  body: unknown;
  error: string | null;
}

export interface FrontendFacts {
  url: string;
  health: HttpProbe;
  models: HttpProbe;
  /** Model ids /v1/models lists. */
  modelIds: string[];
  /** GET /v1/models/<model>/ready (1.6+), when a model was asked for and its id fits a URL path. */
  modelReady?: HttpProbe | null;
}

/** Where the recipe's model comes from, as found on this machine (host/hf/model-source.ts; judged by model.available). */
export type ModelSourceFacts =
  | { kind: 'embedded'; model: string; dir: string }
  | {
      kind: 'local';
      model: string;
      /** The path resolved (~ expanded, relative to the working directory). */
      path: string;
      /** 'missing' | 'dir' | 'file' (a single-file model such as a .gguf); 'unreadable': stat or readdir failed. */
      type: 'missing' | 'dir' | 'file' | 'unreadable';
      /** File names in the folder (not recursive); [] unless a readable dir. */
      files: string[];
      error: string | null;
    }
  | {
      kind: 'hub';
      model: string;
      cacheRoot: string;
      /** snapshots/<rev> folder of the cached model, null when none holds config.json. */
      snapshotDir: string | null;
      /** File names in that snapshot (not recursive). */
      snapshotFiles: string[];
      /** The variable that makes huggingface_hub offline (HF_HUB_OFFLINE=1, TRANSFORMERS_OFFLINE=1), null when online. */
      offline: string | null;
      /** HF_ENDPOINT without its trailing slash, else https://huggingface.co. */
      endpoint: string;
      /** The hub's answer to HEAD <endpoint>/api/models/<id>; null when not asked (cached, or offline). */
      hub: { url: string; status: number | null; error: string | null } | null;
      /** A proxy variable set (HTTPS_PROXY, ...): our request does not go through it, the worker's does. */
      proxy: string | null;
    };
