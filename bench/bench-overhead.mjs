// What `dynamo-dev bench` adds per variant beyond `up` + AIPerf + teardown (issue 23: < 2 s).
// Each variant's result records where its time went (timings: upMs, loadMs, teardownMs, gatesMs,
// totalMs); bench's own share of a variant is totalMs - upMs - loadMs - teardownMs (the gates'
// facts read twice, the exports parsed, result.json stored after each step). Outside the variants
// the process spends time too (start, AIPerf found, versions probed, the report rendered and read
// back): (wall - the variants' totals) / variants is added to each variant's share.
//  - fakes (always): the e2e tests' fake frontend and mockers, the fake AIPerf on PATH;
//  - real (when `npm run test:dynamo` built its venvs): Dynamo 1.6.1's mocker and AIPerf 0.13.0.
// `bench mocker --vary frontend.routerMode=kv,round-robin --repeats 1 --concurrency 1`, RUNS times
// (DD_BENCH_RUNS, default 5); medians and maxima. Preflight is skipped (procs.leftover on a shared
// machine; doctor's cost is doctor*.mjs's).
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { BIN, FIXTURES, ROOT, fakeEnv, loadNote, median, report } from './lib.mjs';

const RUNS = Number(process.env.DD_BENCH_RUNS ?? 5);
const TARGET_MS = 2000;
const root = mkdtempSync(join(tmpdir(), 'dd-bench-overhead-'));
process.once('exit', () => rmSync(root, { recursive: true, force: true }));
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => process.exit(130));

const bindable = (port) => new Promise((resolve) => {
  const s = createServer();
  s.once('error', () => resolve(false));
  s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
});
async function portBase() {
  for (;;) {
    const b = 26_000 + 20 * Math.floor(Math.random() * 200);
    if ((await Promise.all([b, b + 1, b + 2, b + 10, b + 11].map(bindable))).every(Boolean)) return b;
  }
}

/** One bench; per variant: bench's own ms (its share of the process's time outside variants included). */
async function once(env, extra) {
  const base = await portBase();
  const args = ['bench', 'mocker', '--vary', 'frontend.routerMode=kv,round-robin', '--repeats', '1', '--concurrency', '1', '--requests', '8', '--no-preflight',
    '--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`, '--set', `ports.kvEvents=${base + 10}`, ...extra];
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8', timeout: 600_000 });
  const wall = performance.now() - t0;
  if (r.status !== 0) throw new Error(`bench exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  const benchRoot = join(env.DYNAMO_DEV_HOME, 'bench');
  const id = readdirSync(benchRoot).sort().at(-1);
  const doc = JSON.parse(readFileSync(join(benchRoot, id, 'result.json'), 'utf8'));
  const t = doc.variants.map((v) => v.timings);
  const outside = (wall - t.reduce((n, x) => n + x.totalMs, 0)) / t.length;
  return t.map((x) => ({ ...x, ownMs: x.totalMs - x.upMs - x.loadMs - x.teardownMs, outsideMs: outside }));
}

async function measure(name, env, extra = []) {
  const rows = [];
  for (let i = 0; i < RUNS; i++) rows.push(...(await once(env, extra)));
  const col = (k) => rows.map((x) => x[k]);
  const per = rows.map((x) => x.ownMs + x.outsideMs);
  const f = (xs) => `median ${median(xs).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms`;
  console.log(`\n${name}: ${rows.length} variants (${RUNS} benches of 2)`);
  report([
    ['up', f(col('upMs'))], ['AIPerf', f(col('loadMs'))], ['teardown', f(col('teardownMs'))],
    ['gates (in own)', f(col('gatesMs'))], ['own, in the variant', f(col('ownMs'))], ['outside variants, per variant', f(col('outsideMs'))],
    ['bench overhead per variant', `${f(per)}  (target < ${TARGET_MS} ms)`],
  ]);
  return Math.max(...per) < TARGET_MS;
}

console.log(loadNote());
const fakes = fakeEnv({ FAKE_AIPERF_REQUESTS: '2' });
fakes.PATH = [join(FIXTURES, 'aiperf', 'bin'), fakes.PATH].join(delimiter);
let ok = await measure('fakes', fakes);

const { existingVenv, AIPERF_PIN_FILE } = await import(join(ROOT, 'test', 'dynamo', 'venv.mjs'));
const dynamo = existingVenv();
const aiperf = existingVenv(process.env, AIPERF_PIN_FILE);
if (dynamo.python && aiperf.python) {
  const bin = join(root, 'aiperf-bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'aiperf'), `#!${aiperf.python}\nimport sys\nfrom aiperf.cli import app\nsys.exit(app())\n`);
  chmodSync(join(bin, 'aiperf'), 0o755);
  // The mocker recipe's embedded model (dynamo-dev/tiny): no download, as in the real tier.
  const env = { PATH: [bin, process.env.PATH].join(delimiter), HOME: process.env.HOME, HF_HUB_CACHE: join(root, 'hf', 'hub'), HF_HUB_OFFLINE: '1', NO_COLOR: '1', DYNAMO_DEV_HOME: join(root, 'state'), XDG_CACHE_HOME: join(root, 'cache') };
  ok = (await measure('real Dynamo 1.6.1 mocker, AIPerf 0.13.0', env, ['--python', dynamo.python])) && ok;
} else {
  console.log(`\nreal: skipped (${dynamo.why ?? aiperf.why})`);
}
process.exit(ok ? 0 : 1);
