import { describe, expect, it } from 'vitest';
import { fileFindings, noLogFiles, noLogsResult, planFor, where, workerFiles } from '../../../src/doctor/log-view.js';
import type { RunView } from '../../../src/doctor/types.js';
import { buildPlan } from '../../../src/plan/build.js';
import { recipeFrom } from '../../helpers/facts.js';
import { logSet } from './log-sets.js';

// Which logs the log checks read as worker logs, and how a place in them is named.
const ff = (code: string) => ({ code, severity: 'error' as const, count: 1, line: 1, text: 't' });

describe('workerFiles: run logs', () => {
  it('agg, prefill and decode processes are workers, by role; the frontend is not; a process name is used when known', () => {
    const logs = logSet('run', [
      { path: '/l/frontend.log', process: 'frontend', role: 'frontend' },
      { path: '/l/agg-0.log', process: 'agg-0', role: 'agg' },
      { path: '/l/prefill-0.log', process: 'prefill-0', role: 'prefill' },
      { path: '/l/decode-0.log', process: null, role: 'decode' },
      { path: '/l/other.log', process: 'x', role: null },
    ]);
    expect(workerFiles(logs)).toEqual([
      { path: '/l/agg-0.log', name: 'agg-0', role: 'agg' },
      { path: '/l/prefill-0.log', name: 'prefill-0', role: 'prefill' },
      { path: '/l/decode-0.log', name: 'decode-0.log', role: 'decode' },
    ]);
  });
});

describe('workerFiles: --logs files', () => {
  it('a file that logged a KV size is a worker, whatever its name (even "frontend")', () => {
    const logs = logSet('paths', [{ path: '/l/frontend-copy.log', kvTokens: 0 }]);
    expect(workerFiles(logs)).toEqual([{ path: '/l/frontend-copy.log', name: '/l/frontend-copy.log', role: null }]);
  });

  it.each(['worker.log', 'vllm-1.log', 'agg.txt', 'prefill.out', 'decode.err', 'engine.log', 'WORKER-B.LOG'])('%s is a worker by its name', (name) => {
    expect(workerFiles(logSet('paths', [{ path: `/l/${name}` }])).map((f) => f.path)).toEqual([`/l/${name}`]);
  });

  it.each(['frontend.log', 'router.log', 'frontend-worker.log'])('%s is the frontend by its name, not a worker', (name) => {
    expect(workerFiles(logSet('paths', [{ path: `/l/${name}` }]))).toEqual([]);
  });

  it('a file named for the frontend only in its folder is judged by its own name', () => {
    expect(workerFiles(logSet('paths', [{ path: '/frontend/worker.log' }]))).toHaveLength(1);
  });

  it.each(['vllm.oom', 'cuda.error804', 'nvml.mismatch', 'hf.lock-wait', 'ucx.no-am-transport'])('a plainly named file with a %s finding is a worker', (code) => {
    expect(workerFiles(logSet('paths', [{ path: '/l/out.log', findings: [ff(code)] }]))).toHaveLength(1);
  });

  it('a finding any process can log (a port in use, a Python exception) does not make it a worker', () => {
    expect(workerFiles(logSet('paths', [{ path: '/l/out.log', findings: [ff('net.port-in-use'), ff('python.exception'), ff('xvllm.y')] }]))).toEqual([]);
  });

  it('a file the scan did not record findings for is no worker unless named so', () => {
    const logs = logSet('paths', [{ path: '/l/out.log' }]);
    delete logs.scan.byFile;
    expect(workerFiles(logs)).toEqual([]);
    expect(fileFindings(logs, '/l/out.log')).toEqual([]);
  });
});

describe('where, noLogFiles, noLogsResult, planFor', () => {
  it('a place in a run log names its process; in a --logs file the file alone, with or without a line', () => {
    const run = logSet('run', [{ path: '/l/agg-0.log', process: 'agg-0', role: 'agg' }]);
    expect(where(run, '/l/agg-0.log', 12)).toBe('agg-0 (/l/agg-0.log:12)');
    expect(where(run, '/l/agg-0.log')).toBe('agg-0 (/l/agg-0.log)');
    expect(where(run, '/l/unknown.log', 3)).toBe('/l/unknown.log:3');
    const paths = logSet('paths', [{ path: '/l/w.log' }]);
    expect(where(paths, '/l/w.log', 0)).toBe('/l/w.log:0');
  });

  it('no files: a run says none is left; --logs says which patterns were searched', () => {
    expect(noLogFiles(logSet('run', [], [], { label: 'run r1' }))).toBe('no log file of run r1 is left to read');
    expect(noLogFiles(logSet('paths', [], [], { label: '/tmp/x' }))).toBe('no log files in /tmp/x (folders are searched for *.log, *.txt, *.jsonl, *.out, *.err and their .gz)');
  });

  it('a warning about missing logs is given only where allowed, else the same words as a skip', () => {
    const n = { status: 'warn' as const, summary: 's', fix: 'f' };
    expect(noLogsResult(n, true)).toEqual({ status: 'warn', summary: 's', details: [], fix: 'f', evidence: {} });
    expect(noLogsResult(n, false)).toEqual({ status: 'skip', summary: 's', details: [], fix: null, evidence: {} });
    expect(noLogsResult({ status: 'skip', summary: 's', fix: null }, true).status).toBe('skip');
  });

  it("run logs are judged against the run's recorded plan; --logs against doctor's", () => {
    const mine = buildPlan({ recipe: recipeFrom(), runDir: '/tmp/a' });
    const theirs = buildPlan({ recipe: recipeFrom({ maxModelLen: 8192 }), runDir: '/tmp/b' });
    const run = { record: { plan: theirs } } as unknown as RunView;
    expect(planFor(logSet('run', []), run, mine)).toBe(theirs);
    expect(planFor(logSet('paths', []), run, mine)).toBe(mine);
    expect(planFor(logSet('run', []), null, mine)).toBe(mine);
    expect(planFor(null, run, mine)).toBe(mine);
  });
});
