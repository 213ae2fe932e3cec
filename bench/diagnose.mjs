#!/usr/bin/env node
// Benchmark of `dynamo-dev diagnose` on a generated 1 GiB log against `grep -E -c` with the same
// patterns: the signatures' needles, the literals diagnose itself searches for before matching a
// line in full (so both count the same lines). Needs a build (npm run build). Prints a table,
// deletes the log, and exits 1 when diagnose takes more than 3x grep's time or more than 200 MB
// of peak RSS. DD_BENCH_MIB=256 makes a smaller log.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'dynamo-dev.js');
const MAX_RATIO = 3;
const MAX_RSS_MB = 200;
const SIZE = Number(process.env.DD_BENCH_MIB ?? 1024) * 1024 * 1024;

if (!existsSync(join(ROOT, 'dist', 'diagnose', 'signatures.js'))) {
  console.error('bench/diagnose.mjs: no build in dist/; run `npm run build` first');
  process.exit(2);
}
const { SIGNATURES } = await import(join(ROOT, 'dist', 'diagnose', 'signatures.js'));
const needles = [...new Set(SIGNATURES.flatMap((s) => s.needles))];
const grepPattern = needles.map((n) => n.replace(/[.[\]()*+?{}|^$\\]/g, '\\$&')).join('|');

// Healthy lines real runs print (with the near-misses: 804, 8804, "lock", "transport", the KV line
// is a finding of its own so it is used sparingly), and the failure lines of the samples.
const SAMPLES = join(ROOT, 'test', 'fixtures', 'samples', 'logs');
const sampleLines = (f) => readFileSync(join(SAMPLES, f), 'utf8').split('\n').filter(Boolean);
const healthy = [
  ...sampleLines('worker-agg-ready.log').filter((l) => !l.includes('GPU KV cache size')),
  '(EngineCore pid=48211) INFO 10-07 05:14:18 [loggers.py:123] Engine 000: Avg prompt throughput: 8804.2 tokens/s, Avg generation throughput: 804.1 tokens/s, Running: 3 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.1%, Prefix cache hit rate: 84.0%',
  '2026-10-07T05:12:21.001002Z  INFO dynamo_llm::http::service: request completed request_id="a3f1c2" status=200 duration_ms=804 transport="tcp"',
  '\x1b[1;36m(APIServer pid=48100)\x1b[0;0m INFO:     127.0.0.1:53122 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
  '2026-10-07T05:12:22.114005Z DEBUG dynamo_runtime::pipeline::network: lock acquired for stream id=8804',
  '{"time":"2026-10-07T05:12:23.704420Z","level":"INFO","target":"dynamo_llm::kv_router","message":"routed request","worker_id":7587888512394541,"overlap_blocks":12}',
];
const failures = [
  ...sampleLines('worker-free-memory.log'),
  sampleLines('worker-lock-wait.log')[1],
  sampleLines('worker-error804.log')[1],
  sampleLines('frontend-kv-events-disabled.log')[2],
  sampleLines('worker-agg-ready.log').find((l) => l.includes('GPU KV cache size')),
];

async function generate(path) {
  const lines = [];
  for (let i = 0; i < 4000; i++) lines.push(i % 997 === 13 ? failures[Math.floor(i / 997) % failures.length] : healthy[i % healthy.length]);
  const block = Buffer.from(`${lines.join('\n')}\n`);
  const fh = await open(path, 'w');
  let written = 0;
  while (written < SIZE) {
    const { bytesWritten } = await fh.write(block);
    written += bytesWritten;
  }
  await fh.close();
  return written;
}

/** Runs a command; returns wall time, peak RSS (MB) and stdout. */
function measure(cmd, args) {
  const useTime = existsSync('/usr/bin/time');
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const timeOut = join(tmp, `time-${process.hrtime.bigint()}`);
    const child = useTime
      ? spawn('/usr/bin/time', ['-f', '%M', '-o', timeOut, cmd, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
      : spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let hwm = 0;
    // Without GNU time: sample VmHWM (the kernel's peak RSS) while the process runs.
    const timer = useTime ? null : setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) hwm = Math.max(hwm, Number(m[1]));
      } catch { /* exited */ }
    }, 20);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (timer) clearInterval(timer);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (useTime) hwm = Number(readFileSync(timeOut, 'utf8').trim().split('\n').pop());
      resolve({ code, ms, rssMB: hwm / 1024, out });
    });
  });
}

const tmp = mkdtempSync(join(tmpdir(), 'dd-bench-diagnose-'));
let exit = 0;
try {
  const log = join(tmp, 'big.log');
  const bytes = await generate(log);
  const runs = { grep: [], diagnose: [] };
  for (let i = 0; i < 2; i++) {
    runs.grep.push(await measure('grep', ['-E', '-c', grepPattern, log]));
    runs.diagnose.push(await measure(process.execPath, [BIN, 'diagnose', '--json', log]));
  }
  const best = (rs) => rs.reduce((a, b) => (b.ms < a.ms ? b : a));
  const g = best(runs.grep);
  const d = best(runs.diagnose);
  const doc = JSON.parse(d.out);
  const found = doc.findings.reduce((s, f) => s + f.count, 0);
  const grepCount = Number(g.out.trim());
  const ratio = d.ms / g.ms;
  const rss = Math.max(...runs.diagnose.map((r) => r.rssMB));
  const row = (name, r, extra) => `${name.padEnd(22)}${`${(r.ms / 1000).toFixed(2)} s`.padStart(9)}${`${r.rssMB.toFixed(0)} MB`.padStart(10)}   ${extra}`;
  console.log(`diagnose bench: ${(statSync(log).size / 2 ** 30).toFixed(2)} GiB log (${bytes.toLocaleString('en-US')} bytes), best of 2`);
  console.log(`${'tool'.padEnd(22)}${'time'.padStart(9)}${'peak RSS'.padStart(10)}   matching lines`);
  console.log(row('grep -E -c', g, grepCount.toLocaleString('en-US')));
  console.log(row('dynamo-dev diagnose', { ms: d.ms, rssMB: rss }, `${found.toLocaleString('en-US')} (${doc.findings.map((f) => `${f.code} ${f.count}`).join(', ')})`));
  const okRatio = ratio <= MAX_RATIO;
  const okRss = rss < MAX_RSS_MB;
  const okCount = found === grepCount;
  console.log(`ratio ${ratio.toFixed(2)}x grep (limit ${MAX_RATIO}x): ${okRatio ? 'ok' : 'TOO SLOW'}; peak RSS ${rss.toFixed(0)} MB (limit ${MAX_RSS_MB} MB): ${okRss ? 'ok' : 'TOO MUCH'}; counts ${okCount ? 'agree' : 'DIFFER'}`);
  if (!okRatio || !okRss || !okCount || d.code !== 1) exit = 1;
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(exit);
