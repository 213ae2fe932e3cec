// `up` speed (not part of npm test):
//  1. readiness detection: a KV line appended to a log -> the supervisor's follower classifies it
//     (what emits `log-ready`), median over 20 runs; target < 50 ms.
//  2. `up agg-router --detach` with instant fakes: first process spawned -> `ready` event, median of
//     5 runs; target < 1500 ms.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { BIN, ROOT, fakeEnv, median, report } from './lib.mjs';

const { followFile } = await import(join(ROOT, 'dist', 'run', 'follow.js'));
const { classifyLine, compileLogPattern } = await import(join(ROOT, 'dist', 'run', 'readiness.js'));
const { KV_LINE_PATTERN } = await import(join(ROOT, 'dist', 'plan', 'types.js'));

async function detectionOnce(dir, i) {
  const path = join(dir, `w${i}.log`);
  writeFileSync(path, 'INFO 10-07 05:12:09 [model.py:1510] Using max model len 4096\n');
  const kv = compileLogPattern(KV_LINE_PATTERN);
  let t0 = 0;
  const seen = new Promise((resolve) => {
    const f = followFile(path, (line) => {
      const s = classifyLine(line, kv);
      if (s?.kind === 'kv') {
        const ms = performance.now() - t0;
        f.stop();
        resolve(ms);
      }
    }, { pollMs: 100 });
  });
  // Let the watcher settle, as in a real run where the KV line comes seconds after start.
  await new Promise((r) => setTimeout(r, 30));
  t0 = performance.now();
  appendFileSync(path, '(EngineCore pid=48211) INFO 10-07 05:12:18 [kv_cache_utils.py:1087] GPU KV cache size: 14,816 tokens\n');
  return seen;
}

const dir = mkdtempSync(join(tmpdir(), 'dd-bench-up-'));
const detect = [];
for (let i = 0; i < 20; i++) detect.push(await detectionOnce(dir, i));
rmSync(dir, { recursive: true, force: true });

function upOnce(i) {
  const base = 27_500 + i * 20;
  const env = fakeEnv({ FAKE_ENGINE_MAX_S: '60' });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'up', 'agg-router', '--detach', '--no-preflight', '--json',
      '--set', `frontend.httpPort=${base}`, '--set', `ports.system=${base + 1}`, '--set', `ports.kvEvents=${base + 10}`], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let first = null;
    let ready = null;
    createInterface({ input: child.stdout }).on('line', (l) => {
      const e = JSON.parse(l);
      if (e.event === 'starting' && first === null) first = Date.parse(e.ts);
      if (e.event === 'ready') ready = Date.parse(e.ts);
    });
    child.on('exit', (code) => {
      spawnSync(process.execPath, [BIN, 'teardown', '--grace', '2'], { env, stdio: 'ignore' });
      if (code !== 0 || ready === null || first === null) reject(new Error(`up exited ${code} without ready`));
      else resolve(ready - first);
    });
  });
}

const upMs = [];
for (let i = 0; i < 5; i++) upMs.push(await upOnce(i));

const d = median(detect);
const u = median(upMs);
report([
  ['readiness detection: KV line -> log-ready (median of 20)', `${d.toFixed(1)} ms (target < 50 ms; max ${Math.max(...detect).toFixed(1)} ms)`],
  ['up agg-router, instant fakes: first spawn -> ready (median of 5)', `${u.toFixed(0)} ms (target < 1500 ms; runs ${upMs.join(', ')} ms)`],
]);
process.exit(d < 50 && u < 1500 ? 0 : 1);
