import { describe, expect, it } from 'vitest';
import check from '../../../src/doctor/checks/logs.errors.js';
import { fakeFacts } from '../../helpers/facts.js';
import { finding, logSet } from './log-sets.js';

// logs.errors as the user reads it: how many error findings in how many files, each with its
// place, and the fix of the first; warnings named but never a failure.
const AGG = '/runs/r/logs/agg-0.log';
const runFiles = () => [{ path: '/runs/r/logs/frontend.log', process: 'frontend', role: 'frontend' }, { path: AGG, process: 'agg-0', role: 'agg' }];
const e804 = () => finding('cuda.error804', AGG, 12, 'RuntimeError: Error 804', { severity: 'error', count: 3, fix: 'use a build for CUDA 12.8' });
const oom = () => finding('cuda.oom', AGG, 40, 'CUDA out of memory', { severity: 'error', fix: 'lower gpuMemoryUtilization' });
const lockWait = () => finding('hf.lock-wait', AGG, 2, 'Still waiting to acquire lock', { severity: 'warn' });

describe('logs.errors', () => {
  it('one error: its code, count, process and line, and its fix', async () => {
    const r = await check.run(fakeFacts({ logs: logSet('run', runFiles(), [lockWait(), e804()]) }));
    expect(r).toEqual({
      status: 'fail',
      summary: '1 error finding in 2 log files of run 20261130-101500-agg-router: cuda.error804',
      details: [`cuda.error804 x3 at agg-0 (${AGG}:12): RuntimeError: Error 804`],
      fix: 'use a build for CUDA 12.8',
      evidence: {
        source: 'run 20261130-101500-agg-router', files: 2, bytes: 1000,
        findings: [
          { code: 'hf.lock-wait', severity: 'warn', count: 1, file: AGG, line: 2 },
          { code: 'cuda.error804', severity: 'error', count: 3, file: AGG, line: 12 },
        ],
      },
    });
  });

  it('two errors in one file: counted as two, the first one\'s fix', async () => {
    const r = await check.run(fakeFacts({ logs: logSet('paths', [{ path: AGG }], [e804(), oom()]) }));
    expect(r.summary).toBe(`2 error findings in 1 log file of ${AGG}: cuda.error804, cuda.oom`);
    expect(r.details).toEqual([`cuda.error804 x3 at ${AGG}:12: RuntimeError: Error 804`, `cuda.oom x1 at ${AGG}:40: CUDA out of memory`]);
    expect(r.fix).toBe('use a build for CUDA 12.8');
  });

  it('warnings only pass, naming them and where to read more', async () => {
    const r = await check.run(fakeFacts({ logs: logSet('run', runFiles(), [lockWait(), finding('ucx.no-cuda', AGG, 5, 'x', { severity: 'warn' }), finding('vllm.kv-size', AGG, 9, 'y', { severity: 'info' })]) }));
    expect(r).toMatchObject({
      status: 'pass',
      summary: 'no error finding in 2 log files of run 20261130-101500-agg-router (warnings: hf.lock-wait, ucx.no-cuda; see `dynamo-dev diagnose`)',
      details: [],
      fix: null,
    });
  });

  it('nothing found passes without a warnings note', async () => {
    const r = await check.run(fakeFacts({ logs: logSet('paths', [{ path: AGG }], [finding('vllm.kv-size', AGG, 9, 'y', { severity: 'info' })]) }));
    expect(r.summary).toBe(`no error finding in 1 log file of ${AGG}`);
  });

  it('no file left to read is a skip, with empty evidence, not a pass on zero lines', async () => {
    const r = await check.run(fakeFacts({ logs: logSet('run', runFiles(), [], { scanned: 0 }) }));
    expect(r).toEqual({
      status: 'skip',
      summary: 'no log file of run 20261130-101500-agg-router is left to read',
      details: [],
      fix: null,
      evidence: { source: 'run 20261130-101500-agg-router', files: 0, bytes: 0, findings: [] },
    });
    const paths = await check.run(fakeFacts({ logs: logSet('paths', [], [], { label: '/tmp/empty', scanned: 0 }) }));
    expect(paths.summary).toBe('no log files in /tmp/empty (folders are searched for *.log, *.txt, *.jsonl, *.out, *.err and their .gz)');
  });

  it('no logs after a run that failed minutes ago: this check (and only this one) warns', async () => {
    const noLogs = { status: 'warn' as const, summary: 'run X failed 2 min ago; its logs are gone', fix: 'dynamo-dev up' };
    const r = await check.run(fakeFacts({ logs: null, noLogs }));
    expect(r).toEqual({ status: 'warn', summary: 'run X failed 2 min ago; its logs are gone', details: [], fix: 'dynamo-dev up', evidence: {} });
    const quiet = await check.run(fakeFacts({ logs: null }));
    expect(quiet.status).toBe('skip');
  });
});
