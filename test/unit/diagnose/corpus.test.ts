import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fillFix, modelNamedIn } from '../../../src/diagnose/fill-fix.js';
import { scanText } from '../../../src/diagnose/scanner.js';
import type { Finding } from '../../../src/diagnose/types.js';
import { SAMPLES } from '../../helpers/cli.js';

// The corpus of real logs from public threads (test/fixtures/corpus/manifest.json: source, root line,
// code, what the fix must and must not say). diagnose must report the root line of every crash log
// as its first error, with a fix that follows from the quoted line, and no error on healthy logs; and
// the same under the prefixes collectors put in front of each line.

interface Entry {
  file: string; source: string; kind: 'crash' | 'healthy'; rootLines?: number[]; code?: string;
  fix?: { must?: string[]; not?: string[]; fraction?: boolean };
}
const DIR = join(SAMPLES, '..', 'corpus');
const MANIFEST: { logs: Entry[] } = JSON.parse(readFileSync(join(DIR, 'manifest.json'), 'utf8'));
const text = (f: string) => readFileSync(join(DIR, f), 'utf8');
const crashes = MANIFEST.logs.filter((e) => e.kind === 'crash');
const healthy = MANIFEST.logs.filter((e) => e.kind === 'healthy');

/** The first error finding, as diagnose lists it, with its fix as diagnose prints it (MODEL filled from the line). */
function firstError(file: string, body: string): Finding | undefined {
  const f = scanText(file, body).findings.find((x) => x.severity === 'error');
  return f && { ...f, fix: fillFix(f.fix, { model: modelNamedIn(f.text) }) };
}

// Each collector's prefix, as it writes it (docker logs --timestamps: RFC 3339 nano; GitHub Actions raw
// logs; journald short; kubectl logs --prefix; a line coloured whole), put in front of every line.
const PREFIXES: Record<string, (l: string, i: number) => string> = {
  'docker logs --timestamps': (l, i) => `2025-01-01T00:00:${String(i % 60).padStart(2, '0')}.123456789Z ${l}`,
  'GitHub Actions': (l) => `2025-01-01T00:00:00.0000000Z ${l}`,
  journald: (l) => `Dec 05 14:00:00 gpu-host python3[4242]: ${l}`,
  'kubectl logs --prefix': (l) => `[pod/vllm-agg-0/main] ${l}`,
  'kubectl + docker timestamps': (l) => `[pod/vllm-agg-0/main] 2025-01-01T00:00:00.5Z ${l}`,
  ANSI: (l) => `\x1b[31m${l}\x1b[0m`,
};

describe('the corpus of real logs', () => {
  it('has at least 20 crash logs and some healthy ones, each with its public source', () => {
    expect(crashes.length).toBeGreaterThanOrEqual(20);
    expect(healthy.length).toBeGreaterThanOrEqual(5);
    for (const e of MANIFEST.logs) expect(e.source, e.file).toMatch(/^https:\/\/github\.com\/[\w.-]+\/[\w.-]+\/(?:issues|pull)\/\d+$/);
  });

  it.each(crashes.map((e) => [e.file, e]))('%s: the root line is the first error, with its code', (file, e) => {
    const f = firstError(file, text(file));
    expect(f, 'an error finding').toBeDefined();
    expect([f!.code, e.rootLines!.includes(f!.line)], `${f!.code} at line ${f!.line}: ${f!.text}`).toEqual([e.code, true]);
  });

  it.each(crashes.filter((e) => e.fix).map((e) => [e.file, e]))('%s: the fix follows from the quoted line', (file, e) => {
    const f = firstError(file, text(file))!;
    for (const s of e.fix!.must ?? []) expect(f.fix, `must say "${s}"`).toContain(s);
    for (const s of e.fix!.not ?? []) expect(f.fix, `must not say "${s}"`).not.toContain(s);
    // Every port a fix names is the one the quoted line names.
    for (const m of f.fix.matchAll(/\bport (\d+)|sport = :(\d+)/g)) expect(f.text).toContain(m[1] ?? m[2]);
    if (e.fix!.fraction) {
      const [, free, total] = /\((\d+(?:\.\d+)?)\/(\d+(?:\.\d+)?) GiB\)/.exec(f.text)!;
      const suggested = Number(/--gpu-memory-utilization (\d*\.\d+)/.exec(f.fix)![1]);
      expect(suggested).toBeLessThan(Number(free) / Number(total));
      expect(suggested).toBeGreaterThan(0);
    }
  });

  it.each(healthy.map((e) => [e.file]))('%s: no error', (file) => {
    expect(scanText(file, text(file)).findings.filter((f) => f.severity === 'error').map((f) => `${f.code}@${f.line}: ${f.text}`)).toEqual([]);
  });

  it.each(Object.entries(PREFIXES))('under the prefix of %s: the same root line and code for every crash log, no error on healthy ones', (_, prefix) => {
    const wrap = (body: string) => body.split('\n').map((l, i) => (l === '' ? l : prefix(l, i))).join('\n');
    const roots = crashes.map((e) => {
      const f = firstError(e.file, wrap(text(e.file)));
      return [e.file, f?.code ?? null, f ? e.rootLines!.includes(f.line) : false];
    });
    expect(roots).toEqual(crashes.map((e) => [e.file, e.code, true]));
    for (const e of healthy) expect(scanText(e.file, wrap(text(e.file))).findings.filter((f) => f.severity === 'error'), e.file).toEqual([]);
  });
});
