// `status` with 500 old runs in the state directory against the same with 1 (the newest run, a
// real `up agg --detach` with instant fakes, torn down), alternating pairs. The old runs are
// copies of it, ended long ago. Target: ratio <= 1.3x.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, alternate, fakeEnv, loadNote, median, report, timeCpu } from './lib.mjs';

const N = Number(process.env.DD_BENCH_PAIRS ?? 21);
const OLD = 500;
const env = fakeEnv({ FAKE_ENGINE_MAX_S: '60' });
const stateA = env.DYNAMO_DEV_HOME;
const up = spawnSync(process.execPath, [BIN, 'up', 'agg', '--detach', '--no-preflight', '--json',
  '--set', 'frontend.httpPort=27700', '--set', 'ports.system=27701', '--set', 'ports.kvEvents=27710'], { env, encoding: 'utf8' });
const td = spawnSync(process.execPath, [BIN, 'teardown', '--json'], { env, encoding: 'utf8' });
if (up.status !== 0 || td.status !== 0) throw new Error(`could not make a run: ${up.stdout}${up.stderr}${td.stdout}`);
const [realId] = spawnSync('ls', [join(stateA, 'runs')], { encoding: 'utf8' }).stdout.trim().split('\n');
const real = JSON.parse(readFileSync(join(stateA, 'runs', realId, 'run.json'), 'utf8'));

// B: the same newest run plus 500 older ones, one a day back, each with its logs folder.
const stateB = `${stateA}-many`;
cpSync(stateA, stateB, { recursive: true });
const day = 86_400_000;
for (let i = 1; i <= OLD; i++) {
  const at = new Date(Date.parse(real.createdAt) - i * day);
  const p = (n) => String(n).padStart(2, '0');
  const id = `${at.getFullYear()}${p(at.getMonth() + 1)}${p(at.getDate())}-${p(at.getHours())}${p(at.getMinutes())}${p(at.getSeconds())}-agg`;
  const dir = join(stateB, 'runs', id);
  mkdirSync(join(dir, 'logs'), { recursive: true });
  const rec = { ...real, id, createdAt: at.toISOString(), updatedAt: at.toISOString(), state: 'stopped' };
  rec.processes = real.processes.map((q) => ({ ...q, log: join(dir, 'logs', `${q.name}.log`), state: 'stopped' }));
  writeFileSync(join(dir, 'run.json'), `${JSON.stringify(rec, null, 2)}\n`);
  for (const q of rec.processes) cpSync(join(stateA, 'runs', realId, 'logs', `${q.name}.log`), q.log);
}

const before = loadNote();
const run = (home) => {
  const r = timeCpu(process.execPath, [BIN, 'status'], { ...env, DYNAMO_DEV_HOME: home });
  if (r.status !== 0 || !r.stdout.includes(realId)) throw new Error(`status failed: ${r.stdout}${r.stderr}`);
  return r;
};
run(stateA);
run(stateB);
const [a, b] = alternate(N, () => run(stateA), () => run(stateB));
const same = a[0].stdout.replace(/\d+(\.\d+)?\s*(ms|s|m|h|d)\b/g, '') === b[0].stdout.replace(/\d+(\.\d+)?\s*(ms|s|m|h|d)\b/g, '');
const ma = median(a.map((r) => r.ms));
const mb = median(b.map((r) => r.ms));
rmSync(stateB, { recursive: true, force: true });
report([
  ['machine', `${before} (before); ${loadNote()} (after)`],
  [`status, 1 run (median of ${N})`, `${ma.toFixed(0)} ms`],
  [`status, ${OLD + 1} runs (median of ${N})`, `${mb.toFixed(0)} ms; ${b[0].stdout.split('\n').filter((l) => /\d{8}-\d{6}/.test(l)).length} runs shown`],
  ['ratio', `${(mb / ma).toFixed(2)}x (target <= 1.3x); CPU ${(median(b.map((r) => r.cpuMs)) / median(a.map((r) => r.cpuMs))).toFixed(2)}x`],
]);
process.exit(mb / ma <= 1.3 ? 0 : 1);
