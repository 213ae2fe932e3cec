import { describe, expect, it } from 'vitest';
import { probeDocument } from '../../../src/probe/document.js';
import { summarize, type ProbeSend } from '../../../src/probe/stats.js';
import { judge } from '../../../src/probe/verdict.js';
import { formatProbeHeader, formatProbeReport } from '../../../src/ui/probe-report.js';
import { visibleLength } from '../../../src/ui/fit.js';

// The probe report on a terminal: lines within its width, broken at word boundaries, commands
// whole; piped (no width) every line whole as before, for grep.

const ID = '10173050318141243072';
const send = (prefix: number, repeat: number): ProbeSend => ({
  prefix, repeat, ok: true, error: null, ttftMs: repeat ? 24 : 53, totalMs: 60, cachedTokens: repeat ? 1536 : 0, promptTokens: 1600,
  workerId: ID, prefixWords: 1500, tailWords: 12,
});
// The run has two workers; the router sent every request to one (the verdict seen on the real mocker).
const sends = [0, 1, 2].flatMap((p) => [0, 1, 2].map((r) => send(p, r)));
const stats = summarize(sends, { blockSize: 64 });
const doc = probeDocument({
  url: 'http://127.0.0.1:8000', model: '/tmp/dyn-probe/model',
  settings: { prefixes: 3, repeats: 3, prefixTokens: 300, seed: 1, maxTokens: 1, timeoutSeconds: 30 },
  durationMs: 900, sends, stats, verdict: judge(stats, { workersExpected: 2, routerMode: 'kv', prefixes: 3 }),
  notes: ["all prefixes together (900 tokens) fit in one worker's KV cache (1048576 tokens), so even random routing hits often; raise --prefixes to exceed one worker's cache"],
});
const plain = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, '');

describe('probe report width', () => {
  for (const cols of [40, 80, 120]) {
    it(`at ${cols} columns no line is wider, no word is cut, and the next command is one line`, () => {
      const text = plain(formatProbeHeader(doc.url, doc.model, doc.settings, cols) + formatProbeReport(doc, cols));
      const lines = text.split('\n');
      // Only a token longer than the width may exceed it, alone on its line; and the per-prefix
      // table's header (48 columns, a table does not wrap).
      const COMMAND = 'dynamo-dev logs frontend | grep "Adding worker"';
      for (const l of lines) if (visibleLength(l) > cols && !l.startsWith('prefix  workers') && l !== COMMAND) expect(l.trim().includes(' '), l).toBe(false);
      if (cols >= 80) expect(lines.every((l) => visibleLength(l) <= cols)).toBe(true);
      // The words are the piped report's words, in order: wrapping only moved line breaks.
      // (A command too long for a line stands alone without its backticks.)
      const words = (s: string) => s.replaceAll('`', '').split(/\s+/).filter(Boolean);
      expect(words(text)).toEqual(words(plain(formatProbeHeader(doc.url, doc.model, doc.settings) + formatProbeReport(doc))));
      expect(lines).toContain('next: dynamo-dev probe --prefixes 16');
      // The command to copy is whole on one line, with or without its backticks.
      expect(lines.some((l) => l.includes('dynamo-dev logs frontend | grep "Adding worker"'))).toBe(true);
    });
  }

  it('at 80 columns: the verdict and its details wrap under their own indent', () => {
    const lines = plain(formatProbeReport(doc, 80)).split('\n');
    const at = lines.indexOf("! every request went to one of the run's 2 workers: routing between workers was");
    expect(lines.slice(at, at + 4)).toEqual([
      "! every request went to one of the run's 2 workers: routing between workers was",
      '  not tested',
      '    6 of 6 repeats hit the prefix cache (100%, judged by cached_tokens)',
      `    Worker ${ID} answered all 9 requests; the other worker`,
    ]);
    expect(lines[at + 4]).toBe('    answered none.');
    expect(lines).toContain('    the workers it knows: `dynamo-dev logs frontend | grep "Adding worker"`');
  });

  it('piped: every line whole, as before this width was known', () => {
    const text = plain(formatProbeReport(doc));
    expect(text).toContain(`\n    Worker ${ID} answered all 9 requests; the other worker answered none.\n`);
    expect(text).toContain('\nnext: dynamo-dev probe --prefixes 16\n');
    expect(text).not.toContain('\u0001');
    expect(plain(formatProbeHeader(doc.url, doc.model, doc.settings))).toBe(
      'dynamo-dev probe  http://127.0.0.1:8000  model /tmp/dyn-probe/model\n3 prefixes of ~300 tokens, each sent 3 times with a different tail, one request at a time\n',
    );
  });
});
