// Log text for the diagnose benchmarks: healthy lines real runs print (with near-misses: 804, 8804,
// "lock", "transport"; the KV line is a finding of its own so it is used sparingly) and the
// failure lines of the samples. Also the grep pattern that counts the same lines diagnose does.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './lib.mjs';

if (!existsSync(join(ROOT, 'dist', 'diagnose', 'signatures.js'))) {
  console.error('bench: no build in dist/; run `npm run build` first');
  process.exit(2);
}
const { SIGNATURES } = await import(join(ROOT, 'dist', 'diagnose', 'signatures.js'));
const needles = [...new Set(SIGNATURES.flatMap((s) => s.needles))];
/** The signatures' needles: the literals diagnose looks for before matching a line in full. */
export const GREP_PATTERN = needles.map((n) => n.replace(/[.[\]()*+?{}|^$\\]/g, '\\$&')).join('|');

const SAMPLES = join(ROOT, 'test', 'fixtures', 'samples', 'logs');
const sampleLines = (f) => readFileSync(join(SAMPLES, f), 'utf8').split('\n').filter(Boolean);
export const HEALTHY = [
  ...sampleLines('worker-agg-ready.log').filter((l) => !l.includes('GPU KV cache size')),
  '(EngineCore pid=48211) INFO 10-07 05:14:18 [loggers.py:123] Engine 000: Avg prompt throughput: 8804.2 tokens/s, Avg generation throughput: 804.1 tokens/s, Running: 3 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.1%, Prefix cache hit rate: 84.0%',
  '2026-10-07T05:12:21.001002Z  INFO dynamo_llm::http::service: request completed request_id="a3f1c2" status=200 duration_ms=804 transport="tcp"',
  '\x1b[1;36m(APIServer pid=48100)\x1b[0;0m INFO:     127.0.0.1:53122 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
  '2026-10-07T05:12:22.114005Z DEBUG dynamo_runtime::pipeline::network: lock acquired for stream id=8804',
  '{"time":"2026-10-07T05:12:23.704420Z","level":"INFO","target":"dynamo_llm::kv_router","message":"routed request","worker_id":7587888512394541,"overlap_blocks":12}',
];
export const FAILURES = [
  ...sampleLines('worker-free-memory.log'),
  sampleLines('worker-lock-wait.log')[1],
  sampleLines('worker-error804.log')[1],
  sampleLines('frontend-kv-events-disabled.log')[2],
  sampleLines('worker-agg-ready.log').find((l) => l.includes('GPU KV cache size')),
];

/** `lines` lines, one in `every` a failure line (the rest healthy), as one Buffer. */
export function block(lines, every, offset = 13) {
  const out = [];
  for (let i = 0; i < lines; i++) out.push(i % every === offset % every ? FAILURES[Math.floor(i / every) % FAILURES.length] : HEALTHY[i % HEALTHY.length]);
  return Buffer.from(`${out.join('\n')}\n`);
}

/** Runs a command; resolves with wall time, CPU time (user + system), peak RSS (MB; GNU time) and stdout. */
export function measure(cmd, args) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn('/usr/bin/time', ['-f', '@@rss %M %U %S', cmd, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      const m = /@@rss (\d+) ([\d.]+) ([\d.]+)/.exec(err);
      resolve({
        code, ms, rssMB: m ? Number(m[1]) / 1024 : NaN, cpuMs: m ? (Number(m[2]) + Number(m[3])) * 1000 : NaN, out, err: err.replace(/@@rss .*\n?/, ''),
      });
    });
  });
}
