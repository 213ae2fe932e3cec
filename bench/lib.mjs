// Shared helpers for the benchmark scripts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = join(ROOT, 'bin', 'dynamo-dev.js');
export const FIXTURES = join(ROOT, 'test', 'fixtures');

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Wall time of one run of a command, in ms. */
export function timeRun(cmd, args, env = process.env) {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  return { ms: performance.now() - t0, status: r.status, stdout: r.stdout, stderr: r.stderr };
}

let pythonDir;
/**
 * The folder of the interpreter `python3` runs. A version manager's shim (pyenv: bash scripts
 * that exec ~300 helper programs, 50-100 ms of CPU) would otherwise run before every Python
 * process; `pyenv exec` puts this folder first on PATH for the Python it starts, so a Python
 * checker's own children never pay it while doctor's paid it four times (the probe and each fake
 * nvidia-smi). First on PATH, both sides run as on a machine without shims.
 */
function interpreterDir() {
  if (pythonDir === undefined) {
    const r = spawnSync('python3', ['-c', 'import os, sys; print(os.path.dirname(sys.executable))'], { encoding: 'utf8' });
    pythonDir = r.status === 0 ? r.stdout.trim() : '';
  }
  return pythonDir;
}

/** The environment the e2e tests use: fakes first on PATH and PYTHONPATH, a temp state dir. */
// One exit listener for all of them: a listener per call warned (MaxListenersExceeded) at 11 runs.
const benchDirs = [];
process.once('exit', () => { for (const d of benchDirs) rmSync(d, { recursive: true, force: true }); });

export function fakeEnv(vars = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'dd-bench-'));
  benchDirs.push(dir);
  return {
    ...process.env,
    PATH: [join(FIXTURES, 'bin', 'gpu'), join(FIXTURES, 'bin', 'ucx'), interpreterDir(), process.env.PATH].filter(Boolean).join(delimiter),
    PYTHONPATH: join(FIXTURES, 'python'),
    PYTHONDONTWRITEBYTECODE: '1',
    DYNAMO_DEV_HOME: join(dir, 'state'),
    HF_HUB_CACHE: join(dir, 'hub'),
    FAKE_NVIDIA_SMI: 'laptop-570',
    FAKE_UCX_INFO: 'single-host',
    NO_COLOR: '1',
    ...vars,
  };
}

export function report(rows) {
  const w = Math.max(...rows.map((r) => r[0].length));
  for (const [k, v] of rows) console.log(`${k.padEnd(w)}  ${v}`);
}

/** The machine's load, for the record beside each result (ratios move with it). */
export function loadNote() {
  const [l1, l5] = readFileSync('/proc/loadavg', 'utf8').split(' ');
  const procs = readdirSync('/proc').filter((n) => /^\d+$/.test(n)).length;
  return `load ${l1} (1 min), ${l5} (5 min) on ${cpus().length} cores, ${procs} processes`;
}

/**
 * Wall and CPU (user + system, children included) of one run, through GNU time so the CPU of the
 * whole process tree is counted. Falls back to wall time only.
 */
export function timeCpu(cmd, args, env = process.env) {
  const out = join(mkdtempSync(join(tmpdir(), 'dd-bench-time-')), 't');
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', '-o', out, cmd, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  const ms = performance.now() - t0;
  let cpuMs = null;
  try {
    const [u, s] = readFileSync(out, 'utf8').trim().split('\n').pop().split(' ').map(Number);
    cpuMs = (u + s) * 1000;
  } catch { /* no GNU time */ }
  rmSync(dirname(out), { recursive: true, force: true });
  return { ms, cpuMs, status: r.status, stdout: r.stdout, stderr: r.stderr };
}

// Every sleeper still running, killed on exit or Ctrl-C, whatever the benchmark was doing.
const sleepers = new Set();
let hooked = false;
const killSleepers = (pids) => {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch { /* already gone */ }
    sleepers.delete(pid);
  }
};

/**
 * `n` idle processes (`sleep`) that are no child of ours: a shell starts them and exits, so they
 * are as unrelated to dynamo-dev as a browser's. stop() kills exactly those pids and waits until
 * they are gone; an exit of the benchmark (or Ctrl-C) does it too.
 */
export function startSleepers(n) {
  if (!hooked) {
    hooked = true;
    process.once('exit', () => killSleepers([...sleepers]));
    for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => { killSleepers([...sleepers]); process.exit(130); });
  }
  const r = spawnSync('sh', ['-c', `i=0; while [ $i -lt ${n} ]; do sleep 3600 </dev/null >/dev/null 2>&1 & echo $!; i=$((i+1)); done`], { encoding: 'utf8' });
  const pids = r.stdout.trim().split('\n').filter(Boolean).map(Number);
  for (const pid of pids) sleepers.add(pid);
  return {
    pids,
    /** Kills them and resolves once /proc no longer lists any (init reaps them). */
    async stop() {
      killSleepers(pids);
      for (let i = 0; i < 500 && pids.some((p) => existsSync(`/proc/${p}`)); i++) await new Promise((res) => setTimeout(res, 10));
    },
  };
}

/** Runs `a` and `b` alternately `n` times each (a, b, a, b, ...), so drifting load hits both alike. */
export function alternate(n, a, b) {
  const as = [];
  const bs = [];
  for (let i = 0; i < n; i++) {
    as.push(a(i));
    bs.push(b(i));
  }
  return [as, bs];
}

export const fmtMs = (ms) => `${ms.toFixed(0)} ms`;

/**
 * A run record naming detached process trees ({ pid, startTicks, descendants }) as the agg workers
 * of a detached `up` whose supervisor is gone: what `teardown` is given to stop in the benches.
 */
export function treesRunRecord(stateDir, id, trees, supervisorTicks = null) {
  const now = new Date().toISOString();
  return {
    id, recipe: 'agg', model: 'm', createdAt: now, updatedAt: now,
    supervisor: { pid: 999999, startTicks: supervisorTicks, detached: true }, state: 'ready', frontendUrl: 'http://127.0.0.1:1',
    plan: { recipe: 'agg', model: 'm', engine: 'vllm', gpu: { index: 0, totalMiB: null }, budget: { fractionSum: 0, limit: 0.9, budgetMiB: null },
      maxModelLen: 4096, router: { mode: 'round-robin', kvEvents: true }, disaggregated: false, frontendUrl: 'http://127.0.0.1:1', runDir: join(stateDir, 'runs', id), processes: [] },
    processes: trees.map((t, i) => ({
      name: `agg-${i}`, role: 'agg', pid: t.pid, pgid: t.pid, startTicks: t.startTicks, startedAt: now, argv: [], env: {}, ports: {},
      gpuMemoryUtilization: 0.3, state: 'ready', kvTokens: 1, exitCode: null, signal: null, log: join(stateDir, 'runs', id, 'logs', `agg-${i}.log`),
      descendants: t.descendants,
    })),
  };
}

/**
 * `doctor --json` against an anchor checker on the same fake machine (doctor-floor.mjs,
 * doctor-sanity.mjs): one warm-up of each (page cache, pyc of the fakes), then `n` alternating
 * pairs; both must print JSON. `accept(stdout)` may throw on the anchor's warm-up output when the
 * anchor took a short path (an error early on) that would make the comparison unfair. Prints the
 * load before and after, medians of wall and CPU and the ratios; returns the exit code: 0 when
 * doctor's median wall time is <= the anchor's, 1 otherwise (always 0 with `target: false`: a
 * measurement, not a target).
 */
export function doctorAgainst({ name, cmd, args, env, n, accept = () => {}, target = true }) {
  const before = loadNote();
  const run = (c, a) => {
    const r = timeCpu(c, a, env);
    if (!r.stdout.trim().startsWith('{')) throw new Error(`${[c, ...a].join(' ')} printed no JSON: ${r.stderr}`);
    return r;
  };
  const doctorRun = () => run(process.execPath, [BIN, 'doctor', '--json']);
  const anchorRun = () => run(cmd, args);
  doctorRun();
  accept(anchorRun().stdout);
  const [anchor, doctor] = alternate(n, anchorRun, doctorRun);
  const checks = JSON.parse(doctor[0].stdout).checks.length;
  const med = (rs, key) => median(rs.map((r) => r[key]));
  const [aw, dw, ac, dc] = [med(anchor, 'ms'), med(doctor, 'ms'), med(anchor, 'cpuMs'), med(doctor, 'cpuMs')];
  const ratio = dw / aw;
  report([
    ['machine', `${before} (before); ${loadNote()} (after)`],
    [`${name} (median of ${n})`, `${aw.toFixed(0)} ms wall, ${ac.toFixed(0)} ms CPU`],
    [`doctor --json, ${checks} checks (median of ${n})`, `${dw.toFixed(0)} ms wall, ${dc.toFixed(0)} ms CPU`],
    [`ratio doctor / ${name}`, `${ratio.toFixed(2)}x wall (${target ? 'target <= 1.0x' : 'measured, no target'}), ${(dc / ac).toFixed(2)}x CPU`],
  ]);
  return !target || ratio <= 1.0 ? 0 : 1;
}
