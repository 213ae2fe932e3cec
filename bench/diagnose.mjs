#!/usr/bin/env node
// `diagnose` on one big log against `grep -E -c` with the same patterns (the signatures' needles,
// which diagnose itself looks for before matching a line in full, so both count the same lines).
// Cases: 100 MB realistic (a failure line in ~1,000), 100 MB failure-dense (one line in 5), 1 GiB
// realistic. Alternating pairs, medians; peak RSS of diagnose. Targets: <= 2.5x grep at 100 MB,
// <= 2x at 1 GiB, RSS <= 150 MB, counts agree. DD_BENCH_ONLY=100mb|dense|1gib runs one case.
import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, loadNote, median, report } from './lib.mjs';
import { GREP_PATTERN, block, measure } from './logs.mjs';

const MiB = 1024 * 1024;
const CASES = [
  { key: '100mb', name: '100 MB realistic', bytes: 100 * MiB, every: 997, pairs: 5, max: 2.5 },
  { key: 'dense', name: '100 MB failure-dense', bytes: 100 * MiB, every: 5, pairs: 5, max: 2.5 },
  { key: '1gib', name: '1 GiB realistic', bytes: 1024 * MiB, every: 997, pairs: 3, max: 2 },
].filter((c) => !process.env.DD_BENCH_ONLY || c.key === process.env.DD_BENCH_ONLY);
const MAX_RSS_MB = 150;

async function generate(path, bytes, every) {
  const b = block(4000, every);
  const fh = await open(path, 'w');
  let written = 0;
  while (written < bytes) written += (await fh.write(b)).bytesWritten;
  await fh.close();
}

const tmp = mkdtempSync(join(tmpdir(), 'dd-bench-diagnose-'));
let ok = true;
const rows = [['machine', `${loadNote()} (before)`]];
try {
  for (const c of CASES) {
    const log = join(tmp, `${c.key}.log`);
    await generate(log, c.bytes, c.every);
    const g = [];
    const d = [];
    for (let i = 0; i < c.pairs; i++) {
      g.push(await measure('grep', ['-E', '-c', GREP_PATTERN, log]));
      d.push(await measure(process.execPath, [BIN, 'diagnose', '--json', log]));
    }
    rmSync(log);
    const doc = JSON.parse(d[0].out);
    const found = doc.findings.reduce((s, f) => s + f.count, 0);
    const grepCount = Number(g[0].out.trim());
    const gm = median(g.map((r) => r.ms));
    const dm = median(d.map((r) => r.ms));
    const rss = Math.max(...d.map((r) => r.rssMB));
    const ratio = dm / gm;
    const pass = ratio <= c.max && rss <= MAX_RSS_MB && found === grepCount && d.every((r) => r.code === 1);
    ok &&= pass;
    const cpu = median(d.map((r) => r.cpuMs)) / median(g.map((r) => r.cpuMs));
    rows.push([`${c.name} (median of ${c.pairs} pairs)`,
      `grep ${(gm / 1000).toFixed(2)} s, diagnose ${(dm / 1000).toFixed(2)} s: ${ratio.toFixed(2)}x (target <= ${c.max}x; CPU ${cpu.toFixed(2)}x); ` +
      `peak RSS ${rss.toFixed(0)} MB (<= ${MAX_RSS_MB}); lines ${found.toLocaleString('en-US')} vs grep ${grepCount.toLocaleString('en-US')}${found === grepCount ? '' : ' DIFFER'}${pass ? '' : '  MISSED'}`]);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
rows.push(['machine', `${loadNote()} (after)`]);
report(rows);
process.exit(ok ? 0 : 1);
