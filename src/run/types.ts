import type { Plan, ProcessRole } from '../plan/types.js';
import type { Recipe } from '../recipe/schema.js';

// run.json: written before the first spawn and after every state change, so a supervisor
// killed with SIGKILL still leaves everything findable by status and teardown.

export type ProcessState =
  | 'waiting' // for a predecessor's KV line
  | 'starting' // spawned, nothing useful logged yet
  | 'loading' // model loading / engine start logged
  | 'kv-allocated' // KV cache size logged
  | 'ready' // health endpoint ready (frontend: model listed)
  | 'exited' // ended on its own
  | 'failed' // ended with an error, or never got ready in time
  | 'stopped'; // stopped by us

export interface DescendantRecord {
  pid: number;
  startTicks: number | null;
  cmd: string;
}

export interface ProcessRecord {
  name: string;
  role: ProcessRole;
  pid: number | null;
  /** Equals pid: every child leads its own process group. */
  pgid: number | null;
  /** Clock ticks since boot from /proc/PID/stat: the pid-reuse guard. */
  startTicks: number | null;
  startedAt: string | null;
  argv: string[];
  env: Record<string, string>;
  ports: Record<string, number>;
  gpuMemoryUtilization: number | null;
  state: ProcessState;
  kvTokens: number | null;
  exitCode: number | null;
  signal: string | null;
  log: string;
  /** Engine processes (VLLM::*) seen under this process while it ran. */
  descendants: DescendantRecord[];
}

export type RunState = 'starting' | 'ready' | 'stopping' | 'stopped' | 'failed';

export interface RunRecord {
  id: string;
  recipe: string;
  /** The validated recipe the run was started from (doctor judges a live run against it). */
  recipeSpec?: Recipe;
  model: string;
  createdAt: string;
  updatedAt: string;
  supervisor: { pid: number; startTicks: number | null; detached: boolean };
  /** /proc/sys/kernel/random/boot_id when the run started: a record of another boot has nothing alive. */
  bootId?: string | null;
  state: RunState;
  frontendUrl: string;
  plan: Plan;
  processes: ProcessRecord[];
}

/** What status reports: `orphaned` when the supervisor is gone but processes live. */
export type RunStatus = 'starting' | 'ready' | 'stopped' | 'failed' | 'orphaned';
