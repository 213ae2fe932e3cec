// `up mocker` against the released Dynamo (issue 7: our overhead <= 1 s). Not part of npm test. It
// runs against the cached venv that `npm run test:dynamo` builds (test/dynamo/requirements.txt)
// and says it skipped when there is none (exit 3), rather than installing anything itself.
//  1. the real processes on their own: the plan's frontend and two mockers spawned directly, from
//     spawn to their first discovery file and to every registration `up` waits for (both workers'
//     generate instances and the model card in DYN_FILE_KV);
//  2. `dynamo-dev up mocker --detach --no-preflight --json`: from spawning it to its exit once
//     ready (the frontend lists the model, counts both workers, answers a completion), with the
//     times of its events (plan, first process started, ready) to show where the overhead is.
// Overhead = 2 - 1 (medians; alternating 1, 2, 1, 2, ... so drifting load hits both alike).
// Preflight (doctor's checks, benchmarked by doctor*.mjs) is left out: on a machine shared with
// other test runs procs.leftover rightly fails it.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { BIN, ROOT, loadNote, median, report } from './lib.mjs';

const SKIPPED = 3;
const { existingVenv, makeModel } = await import(join(ROOT, 'test', 'dynamo', 'venv.mjs'));
const venv = existingVenv();
if (venv.python === null) {
  console.log(`skipped: needs the real-Dynamo venv: ${venv.why}`);
  process.exit(SKIPPED);
}
const { python } = venv;
const RUNS = Number(process.env.DD_BENCH_RUNS ?? 5);
const TARGET_MS = 1000;

const root = mkdtempSync(join(tmpdir(), 'dd-bench-dynamo-'));
const hubCache = join(root, 'hf', 'hub');
makeModel(python, join(root, 'tiny'), { cache: hubCache, repoId: 'Qwen/Qwen3-0.6B' });
const baseEnv = {
  PATH: process.env.PATH, HOME: process.env.HOME, HF_HUB_CACHE: hubCache, HF_HUB_OFFLINE: '1', NO_COLOR: '1', PYTHONDONTWRITEBYTECODE: '1',
};

// Whatever happens (a throw, Ctrl-C), no real process outlives the benchmark: the process groups
// spawned directly are SIGKILLed, the `up` runs torn down through the CLI.
const groups = new Set();
const upHomes = new Set();
function cleanupAll() {
  for (const g of groups) {
    try {
      process.kill(-g, 'SIGKILL');
    } catch {
      // gone
    }
  }
  groups.clear();
  for (const home of upHomes) spawnSync(process.execPath, [BIN, 'teardown', '--grace', '5'], { env: { ...baseEnv, DYNAMO_DEV_HOME: home }, stdio: 'ignore' });
  upHomes.clear();
  rmSync(root, { recursive: true, force: true });
}
process.once('exit', cleanupAll);
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => process.exit(130));

const bindable = (port) => new Promise((resolve) => {
  const s = createServer();
  s.once('error', () => resolve(false));
  s.listen(port, '0.0.0.0', () => s.close(() => resolve(true)));
});
/** Three free ports below 32768 (a worker's system port is a signed 16-bit number), 9,000-10,999. */
async function portBlock() {
  for (let i = 0; i < 100; i++) {
    const b = 9_000 + 10 * Math.floor(Math.random() * 199);
    if ((await Promise.all([b, b + 1, b + 2].map(bindable))).every(Boolean)) return b;
  }
  throw new Error('no free port block');
}
const sets = (base) => ['--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`];

/** Files below a directory (the file discovery backend writes one per registration). */
function files(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath ?? e.path, e.name));
}

/** Both workers' generate instances and the model card: what the frontend needs to route. */
const registered = (disc) => {
  const all = files(disc).map((f) => f.slice(disc.length));
  return all.filter((f) => f.includes('instances') && /generate/.test(decodeURIComponent(f))).length >= 2 && all.some((f) => f.includes('mdc'));
};

const exited = (c) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', r)));

async function ownOnce(i) {
  const base = await portBlock();
  const state = join(root, `own-${i}`);
  const dry = spawnSync(process.execPath, [BIN, 'up', 'mocker', '--dry-run', '--json', '--python', python, ...sets(base)],
    { env: { ...baseEnv, DYNAMO_DEV_HOME: state }, encoding: 'utf8' });
  if (dry.status !== 0) throw new Error(`up mocker --dry-run exited ${dry.status}: ${dry.stderr}`);
  const plan = JSON.parse(dry.stdout);
  const disc = plan.processes[0].env.DYN_FILE_KV;
  mkdirSync(disc, { recursive: true });
  const t0 = performance.now();
  const children = plan.processes.map((p) => {
    const c = spawn(p.argv[0], p.argv.slice(1), { env: { ...baseEnv, ...p.env }, stdio: 'ignore', detached: true });
    groups.add(c.pid);
    return c;
  });
  let first = null;
  let all = null;
  while (all === null && performance.now() - t0 < 60_000) {
    if (first === null && files(disc).length > 0) first = performance.now() - t0;
    if (registered(disc)) all = performance.now() - t0;
    else await new Promise((r) => setTimeout(r, 5));
  }
  for (const c of children) {
    try {
      process.kill(-c.pid, 'SIGTERM');
    } catch {
      // gone
    }
  }
  await Promise.all(children.map(exited));
  for (const c of children) groups.delete(c.pid);
  if (all === null) throw new Error('the processes did not register within 60 s');
  return { first, all };
}

async function upOnce(i) {
  const base = await portBlock();
  const home = join(root, `up-${i}`);
  upHomes.add(home);
  const env = { ...baseEnv, DYNAMO_DEV_HOME: home };
  const at = {};
  let err = '';
  const t0 = performance.now();
  // GNU time counts the CPU of up and of the children it waited for, not of the run's processes
  // (detached; they outlive it): dynamo-dev's own CPU, which the load on this machine does not inflate.
  const cpuFile = join(root, `up-${i}.cpu`);
  const c = spawn('/usr/bin/time', ['-f', '%U %S', '-o', cpuFile, process.execPath, BIN, 'up', 'mocker', '--detach', '--no-preflight', '--json', '--python', python, ...sets(base)],
    { env, stdio: ['ignore', 'pipe', 'pipe'] });
  c.stderr.on('data', (d) => (err += d));
  createInterface({ input: c.stdout }).on('line', (line) => {
    let e;
    try {
      e = JSON.parse(line);
    } catch {
      return;
    }
    if (typeof e.event === 'string' && at[e.event] === undefined) at[e.event] = performance.now() - t0;
  });
  await exited(c);
  const exit = performance.now() - t0;
  const td = spawnSync(process.execPath, [BIN, 'teardown', '--grace', '5'], { env, stdio: 'ignore' });
  if (td.status === 0) upHomes.delete(home);
  if (c.exitCode !== 0 || at.ready === undefined) throw new Error(`up mocker exited ${c.exitCode} without ready:\n${err}`);
  const [u, sys] = readFileSync(cpuFile, 'utf8').trim().split('\n').pop().split(' ').map(Number);
  return { plan: at.plan, started: at.starting, ready: at.ready, exit, cpu: (u + sys) * 1000 };
}

const own = [];
const up = [];
// Warm the page cache (the first import of the 200 MB runtime is slower than any later one).
await ownOnce('warm');
for (let i = 0; i < RUNS; i++) {
  own.push(await ownOnce(i));
  up.push(await upOnce(i));
}
const ms = (x) => `${Math.round(x)} ms`;
const list = (xs) => xs.map(Math.round).join(', ');
const ownAll = median(own.map((o) => o.all));
const upExit = median(up.map((u) => u.exit));
const overhead = upExit - ownAll;
report([
  ['real processes: spawn -> first discovery file', `${ms(median(own.map((o) => o.first)))} median (${list(own.map((o) => o.first))})`],
  ['real processes: spawn -> both workers and the model registered', `${ms(ownAll)} median (${list(own.map((o) => o.all))})`],
  ['up mocker --detach: spawn -> exit once ready', `${ms(upExit)} median (${list(up.map((u) => u.exit))})`],
  ['  of which spawn -> plan event', `${ms(median(up.map((u) => u.plan)))} median`],
  ['  of which spawn -> first process started', `${ms(median(up.map((u) => u.started)))} median`],
  ['  of which first process started -> ready', `${ms(median(up.map((u) => u.ready - u.started)))} median`],
  ['  CPU of up itself (user + system)', `${ms(median(up.map((u) => u.cpu)))} median (${list(up.map((u) => u.cpu))})`],
  ['dynamo-dev overhead (up exit - registered)', `${ms(overhead)} (target <= ${TARGET_MS} ms)`],
  ['machine', loadNote()],
]);
process.exitCode = overhead <= TARGET_MS ? 0 : 1;
