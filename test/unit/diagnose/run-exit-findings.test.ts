import { describe, expect, it } from 'vitest';
import { exitFindings, mergeExitFindings } from '../../../src/run/exits.js';
import { scanText } from '../../../src/diagnose/scanner.js';
import { proc, record } from './exit-records.js';

// What `diagnose` says about a run's process that ended on its own: when, why, and where to look.

describe('a run\'s process that ended badly', () => {
  it('a server that exited with code 0 on its own ended badly too, and the finding says when', () => {
    const rec = record([proc('agg-0', { state: 'exited', exitCode: 0, endedAt: '2026-11-30T10:00:05.000Z' })]);
    const [f] = exitFindings(rec, scanText('/s/agg-0.log', ''));
    expect(f.text).toMatch(/^agg-0 exited with code 0 at \d\d:\d\d:\d\d$/);
    expect(f.explanation).toMatch(/^agg-0 exited with code 0 at \d\d:\d\d:\d\d \(run r1\)\. Its log is empty or missing: it ended before writing a line\.$/);
    expect(f.line).toBe(0);
  });

  it('a process found gone says when it was noticed', () => {
    const [f] = exitFindings(record([proc('agg-0', { state: 'gone', noticedGoneAt: '2026-11-30T10:00:05.000Z' })]), scanText('/s/x.log', ''));
    expect(f.text).toMatch(/^agg-0 is gone \(exit unknown\) at \d\d:\d\d:\d\d$/);
  });

  it('a warning or the KV size in its log is no cause: the last line is quoted', () => {
    const rec = record([proc('agg-0', { state: 'failed', exitCode: 1 })]);
    const scan = scanText('/s/agg-0.log', 'INFO GPU KV cache size: 9,152 tokens\nStill waiting to acquire lock on /x.lock\nbye\n');
    const [f] = exitFindings(rec, scan, { tails: new Map([['/s/agg-0.log', { line: 3, text: 'bye' }]]) });
    expect(f).toMatchObject({ line: 3, text: 'agg-0 exited with code 1: bye' });
    expect(f.explanation).toBe('agg-0 exited with code 1 (run r1). No known failure signature is in its log: the quoted line is its last.');
  });

  it('an error in its log is the cause: quoted, named in the explanation, its fix given', () => {
    const rec = record([proc('agg-0', { state: 'failed', exitCode: 1 })]);
    const [f] = exitFindings(rec, scanText('/s/agg-0.log', 'OSError: [Errno 98] Address already in use\n'));
    expect(f.explanation).toBe('agg-0 exited with code 1 (run r1). Its log\'s cause is net.port-in-use (reported on its own too).');
    expect(f.fix).toMatch(/^find the holder with `ss -ltnp`/);
  });

  it('merged into a scan of other files: the exit is its log\'s only finding', () => {
    const scan = scanText('/s/frontend.log', 'OSError: [Errno 98] Address already in use\n');
    const merged = mergeExitFindings(scan, exitFindings(record([proc('agg-0', { state: 'failed', exitCode: 1 })]), scan));
    expect(merged.byFile!['/s/agg-0.log']).toEqual([{ code: 'run.process-exited', severity: 'error', count: 1, line: 0, text: 'agg-0 exited with code 1' }]);
    expect(merged.byFile!['/s/frontend.log'].map((f) => f.code)).toEqual(['net.port-in-use']);
  });
});
