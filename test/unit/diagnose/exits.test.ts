import { describe, expect, it } from 'vitest';
import { exitFindings, mergeExitFindings } from '../../../src/run/exits.js';
import { scanText } from '../../../src/diagnose/scanner.js';
import { proc, record } from './exit-records.js';

describe('exitFindings', () => {
  it('a process that exited non-zero with nothing known in its log: an error finding quoting its last line', () => {
    const rec = record([proc('frontend'), proc('agg-0', { state: 'failed', exitCode: 3 })]);
    const scan = scanText('/s/agg-0.log', 'starting\nsomething odd happened\n');
    const [f, ...rest] = exitFindings(rec, scan, { tails: new Map([['/s/agg-0.log', { line: 2, text: 'something odd happened' }]]) });
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ code: 'run.process-exited', severity: 'error', file: '/s/agg-0.log', line: 2, text: 'agg-0 exited with code 3: something odd happened' });
    expect(f.fix).toBe('read its log: `dynamo-dev logs agg-0 --run r1 --lines 80`; check the machine with `dynamo-dev doctor`');
  });

  it('quotes the cause a signature found, with that signature\'s fix', () => {
    const rec = record([proc('agg-0', { state: 'failed', signal: 'SIGKILL' })]);
    const scan = scanText('/s/agg-0.log', 'x\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.02 GiB.\n');
    const [f] = exitFindings(rec, scan);
    expect(f).toMatchObject({ line: 2, text: 'agg-0 was killed by SIGKILL: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.02 GiB.' });
    expect(f.fix).toContain('teardown --orphans');
  });

  it('a run\'s exit gives the fix its plan makes true: start order only for workers sharing the GPU that started together', () => {
    const line = '(EngineCore_DP0 pid=17374) ERROR 09-28 15:47:24 [core.py:718] ValueError: Free memory on device (3.22/4.0 GiB) on startup is less than desired GPU memory utilization (0.9, 3.6 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.';
    const scan = scanText('/s/agg-1.log', `${line}\n`);
    const planned = (waitFor: string[]) => ({ processes: [
      { gpuMemoryUtilization: null, waitFor: [] }, { gpuMemoryUtilization: 0.45, waitFor: [] }, { gpuMemoryUtilization: 0.45, waitFor },
    ] }) as unknown as ReturnType<typeof record>['plan'];
    const withPlan = (waitFor: string[]) => ({ ...record([proc('agg-1', { state: 'failed', exitCode: 1 })]), plan: planned(waitFor) });
    expect(exitFindings(withPlan([]), scan)[0].fix).toContain('start workers one after another');
    const sequential = exitFindings(withPlan(['agg-0']), scan)[0].fix;
    expect(sequential).not.toContain('one after another');
    expect(sequential).toContain('--set workers.0.gpuMemoryUtilization=0.79');
    expect(sequential).toContain('must sum to what is free');
  });

  it('nothing for processes stopped by the user, still running, or waiting', () => {
    const rec = record([proc('frontend', { state: 'stopped', signal: 'SIGTERM' }), proc('agg-0', { state: 'ready' }), proc('agg-1', { pid: null, state: 'waiting' })]);
    expect(exitFindings(rec, scanText('/s/agg-0.log', ''))).toEqual([]);
  });

  it('a process found gone, and one a live run lost before anything recorded it', () => {
    const rec = record([proc('agg-0', { state: 'gone', noticedGoneAt: '2026-11-30T10:00:00.000Z' }), proc('agg-1', { state: 'ready' })]);
    const lost = [{ name: 'agg-1', role: 'agg' as const, how: 'gone' as const, exitCode: null, signal: null, at: null, noticed: false, leftPids: [], diagnosis: null }];
    const fs = exitFindings(rec, scanText('/s/x.log', ''), { lost });
    expect(fs.map((f) => f.text.replace(/ at \d\d:\d\d:\d\d/, ''))).toEqual([
      'agg-0 is gone (exit unknown)',
      'agg-1 is gone (exit unknown)',
    ]);
  });

  it('merge: exits first in the report, after the file\'s own findings in byFile', () => {
    const scan = scanText('/s/agg-0.log', 'OSError: [Errno 98] Address already in use\n');
    const merged = mergeExitFindings(scan, exitFindings(record([proc('agg-0', { state: 'failed', exitCode: 1 })]), scan));
    expect(merged.findings.map((f) => f.code)).toEqual(['run.process-exited', 'net.port-in-use']);
    expect(merged.byFile!['/s/agg-0.log'].map((f) => f.code)).toEqual(['net.port-in-use', 'run.process-exited']);
  });
});
