import { execa } from 'execa';
import { afterAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { killHomeProcesses } from './home-processes.js';

export const ROOT = resolve(fileURLToPath(import.meta.url), '..', '..', '..');
export const BIN = join(ROOT, 'bin', 'dynamo-dev.js');
export const FIXTURES = join(ROOT, 'test', 'fixtures');
export const SAMPLES = join(FIXTURES, 'samples');

export interface FakeEnvOptions {
  /** Put the fake nvidia-smi on PATH with this scenario (FAKE_NVIDIA_SMI); omit for "no nvidia-smi". */
  gpu?: string;
  /** Put the fake ucx_info on PATH with this scenario (FAKE_UCX_INFO); omit for "no ucx_info". */
  ucx?: string;
  /** Put the fake Python packages (torch, vllm, dynamo, nixl) on PYTHONPATH. */
  python?: boolean;
  /** Extra variables (scenarios, UCX_TLS, LD_LIBRARY_PATH...). */
  vars?: Record<string, string | undefined>;
  /** Fake host facts (doctor's machine line) instead of this machine's: test/fixtures/host/fake-host.cjs. */
  host?: FakeHost;
}

/** What doctor's machine line says: `OS · CPU (N cores) · M GiB RAM · Node V`. */
export interface FakeHost { os: string; cpu: string; cores: number; memGiB: number; node: string }

/** The variables that make the CLI see `host` instead of this machine (test/fixtures/host/fake-host.cjs). */
export const fakeHostVars = (host: FakeHost): Record<string, string> => ({ FAKE_HOST: JSON.stringify(host), NODE_OPTIONS: `--require "${join(FIXTURES, 'host', 'fake-host.cjs')}"` });

/** The machine line doctor prints for these facts. */
export const hostLine = (h: FakeHost): string => `${h.os} · ${h.cpu} (${h.cores} cores) · ${h.memGiB} GiB RAM · Node ${h.node}`;

/**
 * A temporary home for one test: state dir and HF cache. cleanup() SIGKILLs every process still
 * running of the home (its runs' processes, a foreground or background `up`: home-processes.ts),
 * then removes it: a test that timed out mid-`up` leaves nothing behind.
 */
export function tempHome(prefix = 'dd-test-'): { dir: string; stateDir: string; hfCache: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const stateDir = join(dir, 'state');
  return {
    dir,
    stateDir,
    hfCache: join(dir, 'hf', 'hub'),
    cleanup: () => {
      const killed = killHomeProcesses(stateDir);
      // Said, not hidden: a passing test stops its own runs; this one left them (a failure or timeout).
      if (killed.length > 0) console.error(`test cleanup: killed ${killed.length} process(es) left running in ${stateDir}: ${killed.map((p) => `${p.pid} ${p.cmd.slice(0, 60)}`).join('; ')}`);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A factory of tempHome()s (prefix PREFIX), all removed after the file's tests. Call at a test file's top level. */
export function tempHomes(prefix: string): () => ReturnType<typeof tempHome> {
  const homes: ReturnType<typeof tempHome>[] = [];
  afterAll(() => homes.forEach((h) => h.cleanup()));
  return () => {
    const h = tempHome(prefix);
    homes.push(h);
    return h;
  };
}

/**
 * The environment the built CLI sees in an e2e test: system PATH without any real nvidia-smi or
 * ucx_info first, the chosen fakes first, a temp state dir and HF cache.
 */
export function fakeEnv(home: { stateDir: string; hfCache: string }, o: FakeEnvOptions = {}): Record<string, string | undefined> {
  const dirs: string[] = [];
  if (o.gpu) dirs.push(join(FIXTURES, 'bin', 'gpu'));
  if (o.ucx) dirs.push(join(FIXTURES, 'bin', 'ucx'));
  const env: Record<string, string | undefined> = {
    PATH: [...dirs, process.env.PATH ?? '/usr/bin:/bin'].join(delimiter),
    HOME: process.env.HOME,
    DYNAMO_DEV_HOME: home.stateDir,
    HF_HUB_CACHE: home.hfCache,
    HF_HOME: undefined,
    // No test asks the real hub: a model not in the test's cache meets a closed local port
    // (connection refused at once), as on a machine without network. Tests of a reachable hub set
    // their own server here.
    HF_ENDPOINT: 'http://127.0.0.1:47',
    HF_HUB_OFFLINE: undefined,
    TRANSFORMERS_OFFLINE: undefined,
    HF_TOKEN: undefined,
    NO_COLOR: '1',
    FORCE_COLOR: undefined,
    UCX_TLS: undefined,
    LD_LIBRARY_PATH: undefined,
    PYTHONPATH: o.python ? join(FIXTURES, 'python') : undefined,
    PYTHONDONTWRITEBYTECODE: '1',
    DYNAMO_DEV_PYTHON: undefined,
    // The environments `dynamo-dev setup` made on this machine are not the test's: its own cache.
    XDG_CACHE_HOME: join(dirname(home.stateDir), 'cache'),
    FAKE_NVIDIA_SMI: o.gpu,
    FAKE_UCX_INFO: o.ucx,
    // The fake nixl._api replays a real recording only when a test asks (test/fixtures/python/nixl/_api.py).
    FAKE_NIXL: undefined,
    ...(o.host ? fakeHostVars(o.host) : {}),
    ...o.vars,
  };
  return env;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  durationMs: number;
}

/** Runs the built binary (npm test builds first). */
export async function runCli(args: string[], env: Record<string, string | undefined>, opts: { timeoutMs?: number; cwd?: string } = {}): Promise<CliResult> {
  const t0 = performance.now();
  const r = await execa(process.execPath, [BIN, ...args], {
    env,
    extendEnv: false,
    reject: false,
    timeout: opts.timeoutMs ?? 20_000,
    cwd: opts.cwd ?? ROOT,
    stdin: 'ignore',
  });
  return { code: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr, durationMs: performance.now() - t0 };
}
