import type { ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, inject } from 'vitest';
import { runCli, tempHome, type CliResult } from '../helpers/cli.js';
import { freeBlock } from '../helpers/ports.js';
import { records, survivors } from '../helpers/runs.js';
import { startUp, type Ev, type Started } from '../helpers/up-run.js';
import { killHomeProcesses } from '../helpers/home-processes.js';

// The real-Dynamo tier drives the built CLI against the released frontend and mocker (the venv
// of test/dynamo/requirements.txt). Every test registers the state directory it used; `cleanup()`
// (afterEach) tears its runs down through the CLI and then SIGKILLs every process of those runs that
// still lives (test/helpers/home-processes.ts), so no real process outlives a failed test. Nothing
// else is signalled.

export type Home = ReturnType<typeof tempHome> & { env: Record<string, string | undefined> };

const homes: Home[] = [];

/** A temp state dir and the environment a user would have: the real venv, the tiny model cached offline. */
export function realHome(vars: Record<string, string | undefined> = {}): Home {
  const h = tempHome('dd-real-');
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DYNAMO_DEV_HOME: h.stateDir,
    HF_HUB_CACHE: inject('hubCache'),
    HF_HOME: undefined,
    HF_HUB_OFFLINE: '1',
    NO_COLOR: '1',
    FORCE_COLOR: undefined,
    PYTHONPATH: undefined,
    PYTHONDONTWRITEBYTECODE: '1',
    DYNAMO_DEV_PYTHON: undefined,
    VLLM_LOGGING_LEVEL: undefined,
    // Environments `dynamo-dev setup` made on this machine are not the test's (setup.test.ts makes its own).
    XDG_CACHE_HOME: join(h.dir, 'cache'),
    ...vars,
  };
  const home = { ...h, env };
  homes.push(home);
  return home;
}

export const python = (): string => inject('dynamoPython');

export { records, survivors };

/** What afterEach hands a hook: the test, with its result once it ran. */
interface TestContext {
  task: { name: string; result?: { state?: string } };
}

/**
 * afterEach: stops every run of the test's homes and removes them. A failed test's runs (records and
 * logs) are copied out first and the folder named: these tests start real processes, and a failure
 * that does not repeat is explained only by what they logged.
 */
export async function cleanup(ctx?: TestContext): Promise<void> {
  const failed = ctx?.task.result?.state === 'fail';
  for (const h of homes.splice(0)) {
    if (records(h.stateDir).length > 0) await runCli(['teardown', '--grace', '5'], h.env, { timeoutMs: 30_000 });
    // What a broken teardown left: every process of the home's runs (marker, state dir, supervisor).
    killHomeProcesses(h.stateDir);
    if (failed) keepRuns(h.stateDir, ctx!.task.name);
    h.cleanup();
  }
  for (const c of upChildren.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}

function keepRuns(stateDir: string, test: string): void {
  const runs = join(stateDir, 'runs');
  if (!existsSync(runs)) return;
  const kept = mkdtempSync(join(tmpdir(), 'dd-dynamo-failed-'));
  cpSync(runs, kept, { recursive: true });
  console.error(`test:dynamo: "${test}" failed; its runs (records and logs) are kept in ${kept}`);
}

/**
 * A block of `n` consecutive free ports below 32768 (a worker's DYN_SYSTEM_PORT is a signed 16-bit
 * number), from 9,000-10,999, away from the ranges the e2e tests draw from.
 */
export function portBlock(n = 4): Promise<number> {
  return freeBlock(9_000, 199, 10, Array.from({ length: n }, (_, k) => k));
}

/** `--set` flags that move a recipe's ports to the block. */
export const portSets = (base: number): string[] => [
  '--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`, '--set', `ports.kvEvents=${base + 10}`,
];

export function cli(args: string[], home: Home, timeoutMs = 60_000): Promise<CliResult> {
  return runCli(args, home.env, { timeoutMs });
}

/**
 * `up ARGS --detach` as a new user runs it, preflight on. On a machine where other test runs keep
 * fake engine processes (a shared dev box), procs.leftover rightly fails the preflight on them:
 * only then (that the one failing check, nothing started) it runs again with --no-preflight, and
 * says so in `preflight`.
 */
export async function upDetached(args: string[], home: Home): Promise<CliResult & { preflight: 'passed' | 'others-leftovers' }> {
  const r = await cli(['up', ...args, '--detach'], home);
  // Check lines go to stderr when preflight fails.
  const out = `${r.stdout}\n${r.stderr}`;
  const failing = out.split('\n').filter((l) => l.startsWith('✗ ') && !/^✗ (preflight failed|up failed)/.test(l));
  const othersOnly = r.code === 1 && /✗ preflight failed/.test(out) && failing.length > 0
    && failing.every((l) => l.startsWith('✗ No leftover engine processes ')) && records(home.stateDir).length === 0;
  if (!othersOnly) return { ...r, preflight: 'passed' };
  return { ...(await cli(['up', ...args, '--detach', '--no-preflight'], home)), preflight: 'others-leftovers' };
}

export function json<T = any>(r: CliResult): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  }
}

const upChildren: ChildProcess[] = [];

export type Foreground = Omit<Started, 'waitEvent'> & { waitEvent(name: string, timeoutMs?: number): Promise<Ev> };

/** `up --json` in the foreground (test/helpers/up-run.ts's startUp), its NDJSON events awaited by name. */
export function foreground(args: string[], home: Home): Foreground {
  const up = startUp(['up', ...args, '--json'], home.env, upChildren);
  return { ...up, waitEvent: (name, timeoutMs = 60_000) => up.waitEvent((e) => e.event === name, timeoutMs) };
}

/** Polls `check` every 100 ms until it returns a value (not undefined) or the time is up. */
export async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * `diagnose` over every log the runs of a home wrote (a healthy run's logs: no error or warning
 * finding, exit 0). Returns the number of log files read.
 */
export async function expectCleanDiagnose(home: Home): Promise<number> {
  const dirs = records(home.stateDir).map((r) => join(home.stateDir, 'runs', r.id, 'logs'));
  expect(dirs.length).toBeGreaterThan(0);
  const r = await cli(['diagnose', ...dirs, '--json'], home);
  const doc = json<{ files: number; findings: { code: string; severity: string; text: string }[] }>(r);
  expect(doc.findings.filter((f) => f.severity !== 'info')).toEqual([]);
  expect(r.code).toBe(0);
  return doc.files;
}

/** The log of a process of the latest run. */
export function logOf(home: Home, name: string): string {
  const rec = records(home.stateDir).sort((a, b) => a.createdAt.localeCompare(b.createdAt)).at(-1)!;
  return readFileSync(rec.processes.find((p) => p.name === name)!.log, 'utf8');
}
