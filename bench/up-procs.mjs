// `up agg-router --detach` with instant fakes on a machine with 3,000 unrelated processes: the time
// from the last worker's KV line (`log-ready` event) to `ready`. Anchor: the same with 10 extra
// processes, in blocks 10 / 3,000 / 10. Targets with 3,000: median <= 50 ms, max <= 100 ms.
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { BIN, fakeEnv, loadNote, median, report, startSleepers } from './lib.mjs';

const N = Number(process.env.DD_BENCH_RUNS ?? 7);
const MANY = 3000;

let port = 27_900;
function upOnce() {
  const base = (port += 20);
  const env = fakeEnv({ FAKE_ENGINE_MAX_S: '60' });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'up', 'agg-router', '--detach', '--no-preflight', '--json',
      '--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`, '--set', `ports.kvEvents=${base + 10}`], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let lastKv = null;
    let ready = null;
    let failed = '';
    createInterface({ input: child.stdout }).on('line', (l) => {
      const e = JSON.parse(l);
      if (e.event === 'log-ready') lastKv = Date.parse(e.ts);
      if (e.event === 'ready') ready = Date.parse(e.ts);
      if (e.event === 'failed') failed = `: ${e.reason}${e.lastLines?.length ? `\n${e.lastLines.join('\n')}` : ''}`;
    });
    child.on('exit', (code) => {
      const td = spawnSync(process.execPath, [BIN, 'teardown', '--grace', '2', '--json'], { env, encoding: 'utf8' });
      if (td.status !== 0) reject(new Error(`teardown left something: ${td.stdout}`));
      else if (code !== 0 || ready === null || lastKv === null) reject(new Error(`up exited ${code} without ready${failed}`));
      else resolve(ready - lastKv);
    });
  });
}
async function block() {
  const out = [];
  for (let i = 0; i < N; i++) out.push(await upOnce());
  return out;
}

const notes = [loadNote()];
let few = startSleepers(10);
const a1 = await block();
await few.stop();
const many = startSleepers(MANY);
notes.push(loadNote());
const b = await block();
await many.stop();
few = startSleepers(10);
const a2 = await block();
await few.stop();
notes.push(loadNote());

const a = [...a1, ...a2];
const m = median(b);
const mx = Math.max(...b);
report([
  ['machine', notes.join(' | ')],
  [`last KV line -> ready, 10 extra processes (median of ${a.length})`, `${median(a).toFixed(0)} ms (max ${Math.max(...a)}; runs ${a.join(', ')})`],
  [`last KV line -> ready, ${MANY} extra processes (median of ${N})`, `${m.toFixed(0)} ms (max ${mx}; runs ${b.join(', ')})`],
  ['ratio', `${(m / Math.max(1, median(a))).toFixed(2)}x; targets: median <= 50 ms, max <= 100 ms`],
]);
process.exit(m <= 50 && mx <= 100 ? 0 : 1);
