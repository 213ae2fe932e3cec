import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES } from './cli.js';
import { descendants, readStartTicks } from '../../src/run/proc.js';
import { writeRun } from '../../src/run/state.js';
import { markerFor, RUN_MARKER } from '../../src/run/run-scan.js';
import type { Plan } from '../../src/plan/types.js';
import type { DescendantRecord, ProcessRecord, RunRecord, SurvivorRecord } from '../../src/run/types.js';

// Real process trees for teardown/status e2e tests, spawned detached exactly as the supervisor
// spawns its children (each leads its own process group), and a registry of everything started so
// afterEach can SIGKILL it whatever happened in the test.

export type TreeMode = 'honour' | 'ignore' | 'leader-first' | 'escape' | 'double-fork';

export interface Tree {
  pid: number;
  startTicks: number;
  /** The VLLM::EngineCore process (found once exec -a has happened). */
  engine: DescendantRecord;
  /** Every descendant at spawn time (what the supervisor records as descendants). */
  descendants: DescendantRecord[];
}

const started = new Set<number>();

/** Polls a condition every 10 ms (a /proc state, not an event we could await), bounded. */
export async function waitUntil<T>(f: () => T | null | undefined | false, what: string, timeoutMs = 5000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** `env`: added to the tree's environment (e.g. the run marker, as the supervisor sets it). */
export async function spawnTree(mode: TreeMode, env: Record<string, string> = {}): Promise<Tree> {
  const child = spawn('bash', [join(FIXTURES, 'proc-trees', 'tree.sh'), mode], { detached: true, stdio: 'ignore', env: { ...process.env, ...env } });
  const pid = child.pid!;
  started.add(pid);
  child.unref();
  const startTicks = readStartTicks(pid)!;
  const desc = await waitUntil(() => {
    const d = descendants(pid);
    return d.some((x) => x.cmd.startsWith('VLLM::EngineCore')) ? d : null;
  }, `the ${mode} tree's engine`);
  for (const d of desc) started.add(d.pid);
  return { pid, startTicks, engine: desc.find((x) => x.cmd.startsWith('VLLM::EngineCore'))!, descendants: desc };
}

/**
 * The run marker of run `id` in `stateDir`, as `up` gives every process it starts (run-scan.ts):
 * what teardown requires of a recorded pid before it signals it. A fake run's processes carry it.
 */
export const runEnv = (stateDir: string, id: string): Record<string, string> => ({ [RUN_MARKER]: markerFor(stateDir, id) });

/** A lone process in its own group (an unrelated process, a fake supervisor, a stray engine); `env`: added to its environment. */
export async function spawnLone(
  argv0: string, args: string[] = ['3000'], opts: { uid?: number; env?: Record<string, string> } = {},
): Promise<{ pid: number; startTicks: number }> {
  const script = `exec -a '${argv0}' sleep ${args.join(' ')}`;
  const env = { ...process.env, ...opts.env };
  const child = opts.uid === undefined
    ? spawn('bash', ['-c', script], { detached: true, stdio: 'ignore', env })
    : spawn('setpriv', [`--reuid=${opts.uid}`, `--regid=${opts.uid}`, '--clear-groups', 'bash', '-c', script], { detached: true, stdio: 'ignore', env });
  const pid = child.pid!;
  started.add(pid);
  child.unref();
  await waitUntil(() => (spawnSync('cat', [`/proc/${pid}/cmdline`]).stdout?.toString().startsWith(argv0) ? true : null), `${argv0} to exec`);
  return { pid, startTicks: readStartTicks(pid)! };
}

/** A pid that is certainly dead now (a finished child). */
export function deadPid(): number {
  return spawnSync('true').pid!;
}

export function isAlive(pid: number): boolean {
  return readStartTicks(pid) !== null;
}

/** SIGKILL every group and pid the tests started (afterEach). */
export function killStarted(): void {
  for (const pid of started) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  started.clear();
}

export function track(pid: number): void {
  started.add(pid);
}

const PLAN: Plan = {
  recipe: 'agg',
  model: 'Qwen/Qwen3-0.6B',
  engine: 'vllm',
  gpu: { index: 0, totalMiB: null },
  budget: { fractionSum: 0.38, limit: 0.9, budgetMiB: null },
  maxModelLen: 4096,
  router: { mode: 'round-robin', kvEvents: true },
  disaggregated: false,
  frontendUrl: 'http://127.0.0.1:8000',
  runDir: '',
  processes: [],
};

export interface ProcSpec {
  name: string;
  role?: ProcessRecord['role'];
  pid: number | null;
  startTicks: number | null;
  state?: ProcessRecord['state'];
  descendants?: DescendantRecord[];
  kvTokens?: number | null;
  ports?: Record<string, number>;
  log?: string;
  /** How it ended, as its supervisor recorded it. */
  signal?: string | null;
}

/** Writes runs/<id>/run.json (and a log per process, with `logLines`) like the supervisor would. */
export async function writeFakeRun(
  stateDir: string,
  o: {
    id: string;
    recipe?: string;
    state?: RunRecord['state'];
    supervisor: { pid: number; startTicks: number | null; detached?: boolean };
    processes: ProcSpec[];
    createdAt?: string;
    logLines?: Record<string, string>;
    /** What a stop left alive after SIGKILL (RunRecord.survivors). */
    survivors?: SurvivorRecord[];
  },
): Promise<RunRecord> {
  const createdAt = o.createdAt ?? new Date().toISOString();
  const logsDir = join(stateDir, 'runs', o.id, 'logs');
  mkdirSync(logsDir, { recursive: true });
  const rec: RunRecord = {
    id: o.id,
    recipe: o.recipe ?? 'agg',
    model: 'Qwen/Qwen3-0.6B',
    createdAt,
    updatedAt: createdAt,
    supervisor: { pid: o.supervisor.pid, startTicks: o.supervisor.startTicks, detached: o.supervisor.detached ?? false },
    state: o.state ?? 'ready',
    frontendUrl: 'http://127.0.0.1:8000',
    plan: { ...PLAN, runDir: join(stateDir, 'runs', o.id) },
    processes: o.processes.map((p) => ({
      name: p.name,
      role: p.role ?? (p.name === 'frontend' ? 'frontend' : 'agg'),
      pid: p.pid,
      pgid: p.pid,
      startTicks: p.startTicks,
      startedAt: createdAt,
      argv: ['python3', '-m', p.name === 'frontend' ? 'dynamo.frontend' : 'dynamo.vllm'],
      env: {},
      ports: p.ports ?? (p.name === 'frontend' ? { http: 8000 } : { system: 8081 }),
      gpuMemoryUtilization: p.name === 'frontend' ? null : 0.38,
      state: p.state ?? 'ready',
      kvTokens: p.kvTokens !== undefined ? p.kvTokens : p.name === 'frontend' ? null : 14816,
      exitCode: null,
      signal: p.signal ?? null,
      log: p.log ?? join(logsDir, `${p.name}.log`),
      descendants: p.descendants ?? [],
    })),
    ...(o.survivors ? { survivors: o.survivors } : {}),
  };
  for (const [name, text] of Object.entries(o.logLines ?? {})) writeFileSync(join(logsDir, `${name}.log`), text);
  await writeRun(stateDir, rec);
  return rec;
}
