import { describe, expect, it } from 'vitest';
import { orphanName, selectOrphans } from '../../../src/run/orphans.js';
import { diagnoseLog, rankFindings, toDiagnosis } from '../../../src/run/diagnosis.js';
import type { Finding } from '../../../src/diagnose/types.js';
import type { ProcessInfo } from '../../../src/host/types.js';
import { join } from 'node:path';
import { SAMPLES } from '../../helpers/cli.js';

// How teardown names a process it found (no record names it), which leftovers `teardown --orphans`
// may stop, and which finding of a crashed process's log is shown as its cause.

describe('the name a stopped process is reported under', () => {
  it('a program\'s base name, after spaces at either end; a path that ends in a slash is "process"', () => {
    expect(orphanName('  /opt/bin/helper-daemon --x 1 ')).toBe('helper-daemon');
    expect(orphanName('sleep\t3000')).toBe('sleep');
    expect(orphanName('')).toBe('process');
    expect(orphanName('   ')).toBe('process');
    expect(orphanName('/usr/bin/')).toBe('process');
  });

  it('a name of exactly 40 characters is shown whole; a longer one is cut to 39 and an ellipsis', () => {
    const forty = 'n'.repeat(40);
    expect(orphanName(`/x/${forty} --flag`)).toBe(forty);
    expect(orphanName(`/x/${forty}y`)).toBe(`${'n'.repeat(39)}…`);
  });

  it('a python module after other flags and tabs is still the name', () => {
    expect(orphanName('python3\t-X dev  -m dynamo.mocker --model-path m')).toBe('dynamo.mocker');
  });
});

describe('which leftovers teardown --orphans stops', () => {
  const p = (pid: number, ppid: number, cmd: string, uid: number | null = 1000): ProcessInfo =>
    ({ pid, ppid, uid, user: uid === null ? null : `u${uid}`, cmd, name: cmd.split(' ')[0], startTicks: pid * 10, ageMs: 1000, pgid: pid }) as ProcessInfo;
  const classify = (cmd: string) => (cmd.startsWith('VLLM::') ? 'vllm-engine' : cmd.includes('dynamo.') ? 'dynamo' : null) as never;

  it('an engine whose parent chain loops (a pid table read mid-change) is judged without hanging', () => {
    const procs = [p(700, 701, 'VLLM::EngineCore'), p(701, 700, 'python3 -m dynamo.vllm')];
    expect(selectOrphans(procs, { uid: 1000, protectedPids: [], runPids: [], classify }).map((o) => o.pid)).toEqual([700, 701]);
    expect(selectOrphans(procs, { uid: 1000, protectedPids: [], runPids: [701], classify }).map((o) => o.pid)).toEqual([]);
  });

  it('a process that is no engine is never selected, however orphaned', () => {
    expect(selectOrphans([p(800, 1, 'vim notes.txt')], { uid: 1000, protectedPids: [], runPids: [], classify })).toEqual([]);
  });

  it('each selected process carries its kind', () => {
    expect(selectOrphans([p(900, 1, 'VLLM::EngineCore')], { uid: 1000, protectedPids: [], runPids: [], classify })[0]).toMatchObject({ pid: 900, kind: 'vllm-engine' });
  });
});

describe('the cause shown for a crashed process', () => {
  const f = (code: string, severity: Finding['severity'], line: number): Finding => ({
    code, severity, line, file: 'w.log', text: `line ${line}`, explanation: `${code} explained`, fix: `${code} fix`,
  }) as Finding;

  it('errors before warnings; a specific cause before the generic exception before a consequence; then the earliest line; then as found', () => {
    const ranked = rankFindings([
      f('vllm.engine-dead', 'error', 1), f('python.exception', 'error', 2), f('cuda.oom', 'error', 30), f('cuda.error804', 'error', 20),
      f('hf.slow', 'warn', 0), f('info.only', 'info', 0), f('cuda.error804', 'error', 20),
    ]);
    expect(ranked.map((x) => `${x.code}@${x.line}`)).toEqual([
      'cuda.error804@20', 'cuda.error804@20', 'cuda.oom@30', 'python.exception@2', 'vllm.engine-dead@1', 'hf.slow@0',
    ]);
  });

  it('two findings on the same line keep the order they were found in', () => {
    const a = { ...f('x.one', 'error', 5), text: 'first' };
    const b = { ...f('x.two', 'error', 5), text: 'second' };
    expect(rankFindings([a, b]).map((x) => x.text)).toEqual(['first', 'second']);
    expect(rankFindings([b, a]).map((x) => x.text)).toEqual(['second', 'first']);
  });

  it('the diagnosis carries the signature\'s title, or the code when the table has none', () => {
    const x = f('cuda.oom', 'error', 3);
    expect(toDiagnosis(x, 'CUDA out of memory')).toEqual({
      code: 'cuda.oom', title: 'CUDA out of memory', severity: 'error', explanation: 'cuda.oom explained', fix: 'cuda.oom fix', text: 'line 3', file: 'w.log', line: 3,
    });
    expect(toDiagnosis(x).title).toBe('cuda.oom');
  });

  it('a real crash log: the root cause first, titled from the signature table; a missing log diagnoses nothing', async () => {
    const d = await diagnoseLog(join(SAMPLES, 'logs', 'worker-error804.log'));
    expect(d.top).toMatchObject({ code: 'cuda.error804', file: join(SAMPLES, 'logs', 'worker-error804.log') });
    expect(d.top!.title).not.toBe('cuda.error804');
    expect(d.all[0]).toEqual(d.top);
    expect(await diagnoseLog(join(SAMPLES, 'logs', 'no-such.log'))).toEqual({ top: null, all: [] });
  });
});
